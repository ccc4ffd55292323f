import { Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ErrorCode as McpErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { declareDiscoveryExtension } from '@x402/extensions/bazaar';
import type { FastifyInstance } from 'fastify';
import { isRecord } from '../common/json.js';
import { ErrorCode } from '../common/api-error.js';
import { problem, type ProblemDetails } from '../common/problem-details.js';
import { PaidCalls, PAYMENT_SIGNATURE_HEADER, type EnteredCall } from '../payments/index.js';
import { toolResourceUrl, type RouteTool } from './route-tools.js';
import { answered, failed, paymentRequired, type ToolResult } from './tool-results.js';

/** The signed price attestation on an attested route's 200. */
const PRICE_ATTESTATION_HEADER = 'price-attestation';
const PAYMENT_REQUIRED_HEADER = 'payment-required';
const PAYMENT_RESPONSE_HEADER = 'payment-response';

/** One tools/call: its arguments, the payment in `_meta`, and who is calling. */
export interface ToolCall {
  readonly args: Record<string, unknown>;
  readonly payment: unknown;
  /** Answer a payment required with the `org.x402/payment` extension binding. */
  readonly extension: boolean;
  /** The MCP client's address, as its HTTP requests are counted (rate limits, logs). */
  readonly ip: string;
  readonly userAgent: string | undefined;
  /** Aborts when the answer can no longer be delivered (cancelled, or the exchange's deadline). */
  readonly signal: AbortSignal;
  /** Takes a call whose settlement was in flight when `signal` aborted: its outcome is to come. */
  readonly waitFor: (outcome: Promise<unknown>) => void;
}

/**
 * Runs a tool call as its route's own HTTP request, in process (Fastify's `inject`): a GET of the
 * route's URL with the arguments, from the client's address, with the payment in the route's
 * payment header. The whole pipeline answers it, as any request: rate limits (the paid or free
 * bucket of its route), the route's checks before any 402, the paywall, settlement, receipt and
 * attestation. A paid call is marked (PaidCalls) so its payment is bound to the tool
 * (`mcp://tool/<name>`), never to the route. The response becomes the tool result. A call
 * cancelled before its settlement began answers -32001 at once, nothing sold.
 */
@Injectable()
export class ToolCalls {
  constructor(
    private readonly adapter: HttpAdapterHost,
    private readonly calls: PaidCalls,
  ) {}

  async call(tool: RouteTool, call: ToolCall): Promise<ToolResult> {
    if (call.signal.aborted) throw cancelled();
    const url = urlOf(tool, call.args);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (call.userAgent !== undefined) headers['user-agent'] = call.userAgent;
    if (tool.price !== undefined && call.payment !== undefined) {
      headers[PAYMENT_SIGNATURE_HEADER] = encodePaymentSignatureHeader(
        withoutDiscoveryEcho(call.payment),
      );
    }
    const entered =
      tool.price === undefined
        ? undefined
        : this.calls.enter({
            route: `mcp:${tool.name}`,
            resource: `MCP ${tool.name} ${url}`,
            resourceUrl: toolResourceUrl(tool),
          });
    const outcome = this.adapter.httpAdapter
      .getInstance<FastifyInstance>()
      .inject({
        method: 'GET',
        url,
        headers: { ...headers, ...entered?.headers },
        remoteAddress: call.ip,
      })
      .finally(() => entered?.leave())
      .then((response) => this.resultOf(tool, call, response));
    return unlessCancelled(outcome, call, entered);
  }

  private resultOf(
    tool: RouteTool,
    call: ToolCall,
    response: { statusCode: number; body: string; headers: Record<string, unknown> },
  ): ToolResult {
    const header = (name: string): string | undefined => {
      const value = response.headers[name];
      return typeof value === 'string' ? value : undefined;
    };
    if (response.statusCode === 200) {
      const receipt = header(PAYMENT_RESPONSE_HEADER);
      return answered(
        JSON.parse(response.body),
        receipt === undefined ? undefined : decodePaymentResponseHeader(receipt),
        header(PRICE_ATTESTATION_HEADER),
      );
    }
    const required = header(PAYMENT_REQUIRED_HEADER);
    if (response.statusCode === 402 && required !== undefined) {
      return paymentRequired(forTool(decodePaymentRequiredHeader(required), tool), call.extension);
    }
    return failed(problemIn(response.statusCode, response.body));
  }
}

/**
 * The route's URL for the arguments: path parameters in their segments, the rest as the query,
 * each URL-encoded; a list is comma-separated (OpenAPI's `simple` style). An argument the route
 * does not take, a missing or empty required one, or one that is no scalar or list of scalars
 * is an MCP invalid-params error: no request is made.
 */
export function urlOf(tool: RouteTool, args: Record<string, unknown>): string {
  for (const name of Object.keys(args)) {
    if (!tool.arguments.some((argument) => argument.name === name)) {
      throw invalid(`${tool.name} takes no argument \`${name}\``);
    }
  }
  const query = new URLSearchParams();
  const values = new Map<string, string>();
  for (const argument of tool.arguments) {
    const value = args[argument.name];
    if (value === undefined || value === '') {
      if (argument.required) throw invalid(`${tool.name} needs the argument \`${argument.name}\``);
      continue;
    }
    const text = textOf(value);
    if (text === undefined) {
      throw invalid(`${tool.name}: \`${argument.name}\` must be a string, number or list of them`);
    }
    if (argument.in === 'path') values.set(argument.name, encodeURIComponent(text));
    else query.set(argument.name, text);
  }
  const path = tool.path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? (values.get(segment.slice(1)) ?? '') : segment))
    .join('/');
  const search = query.toString();
  return search === '' ? path : `${path}?${search}`;
}

function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (
    Array.isArray(value) &&
    value.every((item) => textOf(item) !== undefined && !Array.isArray(item))
  ) {
    return value.map((item) => textOf(item)).join(',');
  }
  return undefined;
}

/**
 * The call's outcome, or its cancellation's error once `call.signal` aborts. A paid call whose
 * settlement has begun is not cancelled (money may have moved): its outcome is awaited still,
 * and handed to `call.waitFor` so that the exchange waits for it too.
 */
function unlessCancelled(
  outcome: Promise<ToolResult>,
  call: ToolCall,
  entered: EnteredCall | undefined,
): Promise<ToolResult> {
  return new Promise<ToolResult>((resolve, reject) => {
    const onCancel = () => {
      if (entered === undefined || entered.cancel()) reject(cancelled());
      else call.waitFor(outcome);
    };
    call.signal.addEventListener('abort', onCancel, { once: true });
    outcome
      .finally(() => {
        call.signal.removeEventListener('abort', onCancel);
      })
      .then(resolve, reject);
  });
}

function cancelled(): McpError {
  return new McpError(
    McpErrorCode.RequestTimeout,
    'The call was cancelled (its exchange ran past its deadline) before it was sold; nothing was charged.',
  );
}

function invalid(message: string): McpError {
  return new McpError(McpErrorCode.InvalidParams, message);
}

/** The route's 402 as the tool's: its resource, and its discovery as an MCP tool. */
function forTool(required: PaymentRequired, tool: RouteTool): PaymentRequired {
  const description = `${tool.description}. ${String(tool.price)} per call, paid with x402.`;
  return {
    ...required,
    resource: { url: toolResourceUrl(tool), description, mimeType: 'application/json' },
    extensions: {
      ...required.extensions,
      ...declareDiscoveryExtension({
        toolName: tool.name,
        description,
        transport: 'streamable-http',
        inputSchema: tool.inputSchema,
      }),
    },
  };
}

/**
 * The payment without its echo of the tool's bazaar declaration: the paywall checks echoes
 * against its HTTP route's declaration, and discovery info moves no money. Anything else is
 * passed on as sent, for the route to judge (a malformed one is its 400 `invalid_payment`).
 */
function withoutDiscoveryEcho(payment: unknown): PaymentPayload {
  if (!isRecord(payment) || !isRecord(payment['extensions'])) return payment as PaymentPayload;
  const extensions = { ...payment['extensions'] };
  delete extensions['bazaar'];
  return { ...payment, extensions } as unknown as PaymentPayload;
}

/** The route's problem body, or one that says what the status means if it sent none. */
function problemIn(status: number, body: string): ProblemDetails {
  try {
    const parsed: unknown = JSON.parse(body);
    if (isRecord(parsed) && typeof parsed['code'] === 'string')
      return parsed as unknown as ProblemDetails;
  } catch {
    // not JSON: described below
  }
  return problem(status, ErrorCode.InternalError, `The route answered ${String(status)}.`);
}
