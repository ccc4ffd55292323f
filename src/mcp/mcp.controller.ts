import { Controller, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeEndpoint } from '@nestjs/swagger';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { McpToolServer } from './mcp-tool-server.js';

/** Request headers the MCP transport reads (content negotiation, protocol version). */
const MCP_HEADERS = ['accept', 'content-type', 'mcp-protocol-version'] as const;

/**
 * `POST /mcp`: the Model Context Protocol over Streamable HTTP, stateless (every call stands
 * alone; JSON answers, no SSE stream), through the same Nest pipeline as every route (rate
 * limit, problem details, access line, metrics). Other methods on /mcp answer 405.
 */
@Controller('mcp')
export class McpController {
  constructor(private readonly tools: McpToolServer) {}

  @Post()
  @ApiExcludeEndpoint()
  async post(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    const server = this.tools.serverFor(request, reply);
    await server.connect(transport);
    try {
      const headers = new Headers();
      for (const name of MCP_HEADERS) {
        const value = request.headers[name];
        if (typeof value === 'string') headers.set(name, value);
      }
      const answer = await transport.handleRequest(
        new Request('http://mcp.local/mcp', { method: 'POST', headers }),
        { parsedBody: request.body },
      );
      void reply.status(answer.status);
      answer.headers.forEach((value, name) => {
        void reply.header(name, value);
      });
      return await answer.text();
    } finally {
      await server.close();
    }
  }
}
