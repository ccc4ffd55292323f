import { Injectable } from '@nestjs/common';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema,
  ErrorCode as McpErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { RouteTools, type RouteTool } from './route-tools.js';
import { ToolCalls } from './tool-calls.js';
import { PAYMENT_EXTENSION, PAYMENT_META, advertisesPaymentExtension } from './tool-results.js';

const SERVER_INFO = { name: 'x402-price-api', version: '1.0.0' };

/** Who an exchange is from, when its calls are cancelled, and what it waits for past that. */
export interface ExchangeCaller {
  readonly ip: string;
  readonly userAgent: string | undefined;
  readonly signal: AbortSignal;
  /** Takes the outcome of a call whose settlement was in flight when `signal` aborted. */
  readonly waitFor: (outcome: Promise<unknown>) => void;
}

/**
 * The MCP server of one `POST /mcp` exchange: `tools/list` names a tool for every GET route
 * under `/v1/` (RouteTools) with its price, `tools/call` runs the call as its route's request
 * (ToolCalls). The calls of one exchange run one after another, so a batch is counted and
 * limited call by call as the same requests one by one would be. Stateless: a new server per
 * exchange, closed after it.
 */
@Injectable()
export class McpToolServer {
  /** The SDK's schema validator (elicitation only): one for every exchange, not a new Ajv each. */
  private readonly validator = new AjvJsonSchemaValidator();

  constructor(
    private readonly tools: RouteTools,
    private readonly calls: ToolCalls,
  ) {}

  /** The tools as `tools/list` shows them. */
  listing(): Tool[] {
    return this.tools.all().map((tool) => ({
      name: tool.name,
      description: describe(tool),
      inputSchema: tool.inputSchema as Tool['inputSchema'],
      annotations: { readOnlyHint: true, openWorldHint: false },
    }));
  }

  // The low-level Server, not McpServer: a paid tool answers with x402's own result shapes (the
  // extension binding's `payment_required`), which McpServer's per-tool handling does not pass.
  // eslint-disable-next-line @typescript-eslint/no-deprecated
  serverFor(caller: ExchangeCaller): Server {
    // eslint-disable-next-line @typescript-eslint/no-deprecated
    const server = new Server(SERVER_INFO, {
      capabilities: { tools: {}, experimental: { [PAYMENT_EXTENSION]: {} } },
      jsonSchemaValidator: this.validator,
    });
    let queue: Promise<unknown> = Promise.resolve();
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.listing() }));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      const tool = this.tools.named(request.params.name);
      if (tool === undefined) {
        throw new McpError(McpErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      }
      const meta = request.params._meta;
      const signal = AbortSignal.any([caller.signal, extra.signal]);
      const call = () =>
        this.calls.call(tool, {
          args: request.params.arguments ?? {},
          payment: meta?.[PAYMENT_META],
          extension: advertisesPaymentExtension(meta),
          ip: caller.ip,
          userAgent: caller.userAgent,
          signal,
          waitFor: caller.waitFor,
        });
      const result = queue.then(call, call);
      queue = result.catch(() => undefined);
      return result;
    });
    return server;
  }
}

function describe(tool: RouteTool): string {
  if (tool.price === undefined) return `${tool.description}. Free.`;
  return (
    `${tool.description}. Costs ${tool.price} per call, paid with x402 (an unpaid call answers ` +
    `with the PaymentRequired; retry with the PaymentPayload in _meta["${PAYMENT_META}"]).`
  );
}
