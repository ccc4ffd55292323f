import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { McpController } from './mcp.controller.js';
import { McpExchanges } from './mcp-exchanges.js';
import { McpToolServer } from './mcp-tool-server.js';
import { RouteTools } from './route-tools.js';
import { ToolCalls } from './tool-calls.js';

/**
 * The routes as MCP tools on `POST /mcp` (Streamable HTTP): every GET route under `/v1/` is a
 * tool, paid with x402 per the MCP transport of the x402 specification through the route's own
 * pipeline.
 */
@Module({
  imports: [DiscoveryModule, RateLimitModule],
  controllers: [McpController],
  providers: [McpToolServer, RouteTools, ToolCalls, McpExchanges],
  exports: [RouteTools],
})
export class McpModule {}
