import { Module } from '@nestjs/common';
import { AggregationModule } from '../aggregation/aggregation.module.js';
import { AssetsModule } from '../assets/assets.module.js';
import { TickersModule } from '../tickers/tickers.module.js';
import { McpController } from './mcp.controller.js';
import { McpToolServer } from './mcp-tool-server.js';
import { PaidToolCalls } from './paid-tool-calls.js';

/**
 * The same prices as MCP tools on `POST /mcp` (Streamable HTTP), paid with x402 per the MCP
 * transport of the x402 specification, through the same paywall as the HTTP routes.
 */
@Module({
  imports: [AssetsModule, AggregationModule, TickersModule],
  controllers: [McpController],
  providers: [McpToolServer, PaidToolCalls],
})
export class McpModule {}
