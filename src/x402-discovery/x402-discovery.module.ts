import { Module } from '@nestjs/common';
import { McpModule } from '../mcp/mcp.module.js';
import { X402DiscoveryController } from './x402-discovery.controller.js';

/** The x402 discovery document: the paid routes and the paid MCP tools, in one list. */
@Module({ imports: [McpModule], controllers: [X402DiscoveryController] })
export class X402DiscoveryModule {}
