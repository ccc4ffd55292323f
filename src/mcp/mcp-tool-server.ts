import { Injectable } from '@nestjs/common';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode as McpErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SourcesAnswer } from '../aggregation/sources-answer.js';
import { AssetCatalogue } from '../assets/asset-catalogue.js';
import { assetList } from '../assets/asset-list.js';
import { ApiError } from '../common/api-error.js';
import { MCP_TOOLS, type McpTool } from './mcp-tools.js';
import { PaidToolCalls } from './paid-tool-calls.js';
import {
  PAYMENT_EXTENSION,
  PAYMENT_META,
  advertisesPaymentExtension,
  answered,
  failedWith,
  type ToolResult,
} from './tool-results.js';

const SERVER_INFO = { name: 'x402-price-api', version: '1.0.0' };

/**
 * The MCP server of one `POST /mcp` exchange: `tools/list` names each tool with its price (the
 * `@Paid` price of its HTTP route), `tools/call` answers the free tools and sells the paid ones
 * through PaidToolCalls. Stateless: a new server per exchange, closed after it.
 */
@Injectable()
export class McpToolServer {
  constructor(
    private readonly paid: PaidToolCalls,
    private readonly catalogue: AssetCatalogue,
    private readonly sources: SourcesAnswer,
  ) {}

  /** The tools as `tools/list` shows them. */
  listing(): Tool[] {
    return MCP_TOOLS.map((tool) => ({
      name: tool.name,
      description:
        tool.kind === 'ticker'
          ? `${tool.description} Costs ${this.paid.priceOf(tool)} per call, paid with x402 ` +
            `(an unpaid call answers with the PaymentRequired; retry with the PaymentPayload in ` +
            `_meta["${PAYMENT_META}"]).`
          : tool.description,
      inputSchema: tool.inputSchema as Tool['inputSchema'],
      annotations: { readOnlyHint: true, openWorldHint: false },
    }));
  }

  // The low-level Server, not McpServer: a paid tool answers with x402's own result shapes (the
  // extension binding's `payment_required`), which McpServer's per-tool handling does not pass.
  // eslint-disable-next-line @typescript-eslint/no-deprecated
  serverFor(http: FastifyRequest, reply: FastifyReply): Server {
    // eslint-disable-next-line @typescript-eslint/no-deprecated
    const server = new Server(SERVER_INFO, {
      capabilities: { tools: {}, experimental: { [PAYMENT_EXTENSION]: {} } },
    });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.listing() }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const tool = MCP_TOOLS.find((candidate) => candidate.name === request.params.name);
      if (tool === undefined) {
        throw new McpError(McpErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      }
      const meta = request.params._meta;
      const result = await this.answer(tool, {
        args: request.params.arguments ?? {},
        payment: meta?.[PAYMENT_META],
        extension: advertisesPaymentExtension(meta),
        http,
        reply,
      });
      return result;
    });
    return server;
  }

  private async answer(
    tool: McpTool,
    call: {
      args: Record<string, unknown>;
      payment: unknown;
      extension: boolean;
      http: FastifyRequest;
      reply: FastifyReply;
    },
  ): Promise<ToolResult> {
    switch (tool.kind) {
      case 'assets':
        return answered(assetList(this.catalogue));
      case 'sources':
        try {
          return answered(await this.sources.answer());
        } catch (error) {
          if (error instanceof ApiError) return failedWith(error);
          throw error;
        }
      case 'ticker':
        return this.paid.call({ tool, ...call });
    }
  }
}
