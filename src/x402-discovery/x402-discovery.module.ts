import { Module } from '@nestjs/common';
import { X402DiscoveryController } from './x402-discovery.controller.js';

/** The x402 discovery document: the paid routes and the paid MCP tools, in one list. */
@Module({ controllers: [X402DiscoveryController] })
export class X402DiscoveryModule {}
