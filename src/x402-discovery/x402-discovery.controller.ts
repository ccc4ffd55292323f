import { Controller, Get, Header, Inject, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { RouteTools, toolResourceUrl } from '../mcp/route-tools.js';
import { PAYMENT_SETTINGS, type PaymentConfig, PaidRouteExplorer } from '../payments/index.js';
import { X402DiscoveryDto } from './x402-discovery.dto.js';

const DISCOVERY_CACHE = 'public, max-age=300';

/**
 * `GET /.well-known/x402`: what this service sells, for x402 crawlers and agents: each `@Paid`
 * route and each paid MCP tool. Prices and offers are in each resource's 402 (and in
 * `tools/list`), from the same declarations.
 */
@ApiTags('x402')
@Controller('.well-known')
export class X402DiscoveryController {
  constructor(
    private readonly routes: PaidRouteExplorer,
    private readonly tools: RouteTools,
    @Inject(PAYMENT_SETTINGS.token) private readonly payments: PaymentConfig,
  ) {}

  @Get('x402')
  @ApiOperation({
    operationId: 'getX402Discovery',
    summary: 'Every payable resource (free)',
    description:
      'The x402 discovery document: the paid HTTP routes and the paid MCP tools. Ask a resource ' +
      'without paying to get its offers (402, or the MCP tool result carrying PaymentRequired).',
  })
  @ApiOkResponse({ type: X402DiscoveryDto, description: 'The payable resources.' })
  @Header('cache-control', DISCOVERY_CACHE)
  document(@Req() request: FastifyRequest): X402DiscoveryDto {
    const base = this.payments.publicUrl ?? `${request.protocol}://${request.host}`;
    const http = this.routes
      .explore()
      .map((route) => `${base}${route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
    const tools = this.tools
      .all()
      .filter((tool) => tool.price !== undefined)
      .map(toolResourceUrl);
    return {
      version: 1,
      resources: [...http, ...tools],
      instructions:
        `Pay per request with x402 v2 (PAYMENT-SIGNATURE) or v1 (X-PAYMENT): an unpaid request ` +
        `answers 402 with the offers. MCP tools are served on POST ${base}/mcp (Streamable HTTP): ` +
        `an unpaid call returns the PaymentRequired; retry with the PaymentPayload in ` +
        `_meta["x402/payment"].`,
    };
  }
}
