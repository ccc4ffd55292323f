import { Injectable } from '@nestjs/common';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { declareDiscoveryExtension } from '@x402/extensions/bazaar';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { isRecord } from '../common/json.js';
import { PreparedResponseException } from '../common/prepared-response.exception.js';
import { noteSale } from '../logging/request-log.js';
import { MetricsService } from '../metrics/metrics.service.js';
import {
  PaymentRefusedError,
  type RequestWithPayment,
  PaymentIntake,
  PaidRouteExplorer,
  X402Paywall,
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_RESPONSE_HEADER,
} from '../payments/index.js';
import { TickerQuotesService } from '../tickers/ticker-quotes.service.js';
import { tickerAnswer, tickersAnswer } from '../tickers/ticker-answers.js';
import { selectionOf } from '../tickers/ticker-request.guard.js';
import { routeCall, toolResourceUrl, type PaidTool } from './mcp-tools.js';
import {
  PAYMENT_META,
  answered,
  failedWith,
  paymentRequired,
  type ToolResult,
} from './tool-results.js';

/** One paid tool call: the MCP request's `_meta`, and the HTTP exchange it arrived on. */
export interface ToolCall {
  readonly tool: PaidTool;
  readonly args: Record<string, unknown>;
  readonly payment: unknown;
  /** Answer a payment required with the `org.x402/payment` extension binding. */
  readonly extension: boolean;
  readonly http: FastifyRequest;
  readonly reply: FastifyReply;
}

/**
 * Sells a tool call through the same paywall as its HTTP route: the arguments are checked and
 * the quotes resolved first (nothing is asked for a call that cannot be answered), then the
 * payment in `_meta["x402/payment"]` opens a sale with the route's offers (PaymentIntake, the
 * schemes, the ledger), the answer is settled before it is returned, and every refusal or
 * fault is a tool result that charges nothing (or 502 `settlement_unknown` naming the
 * transaction). The payment is bound to the tool (`mcp://tool/<name>`), never to the route.
 */
@Injectable()
export class PaidToolCalls {
  constructor(
    private readonly paywall: X402Paywall,
    private readonly intake: PaymentIntake,
    private readonly quotes: TickerQuotesService,
    private readonly explorer: PaidRouteExplorer,
    private readonly metrics: MetricsService,
  ) {}

  /** The `@Paid` price of a tool's HTTP route: one price list for both. */
  priceOf(tool: PaidTool): string {
    const route = this.explorer
      .explore()
      .find((candidate) => candidate.method === 'GET' && candidate.path === tool.route);
    if (route === undefined) throw new Error(`${tool.name}: no @Paid route ${tool.route}`);
    return route.price;
  }

  async call(call: ToolCall): Promise<ToolResult> {
    const { tool, args, extension } = call;
    let request: RequestWithPayment;
    let answer: unknown;
    try {
      const { params, path } = routeCall(tool, args);
      const quotes = await this.quotes.quote(selectionOf(tool.selection, params));
      answer = tool.selection === 'one' ? tickerAnswer(quotes) : tickersAnswer(quotes);
      request = paidCallRequest(call.http, tool, path, JSON.stringify(params));
    } catch (error) {
      if (error instanceof ApiError) return failedWith(error);
      throw error;
    }
    try {
      if (call.payment === undefined) {
        this.metrics.paymentChallenged(`mcp:${tool.name}`);
        const challenge = await this.paywall.challenge(request);
        return paymentRequired(this.forTool(challenge.required, tool), extension);
      }
      return await this.sell(request, call, answer);
    } catch (error) {
      return this.asResult(error, tool, extension);
    }
  }

  private async sell(
    request: RequestWithPayment,
    { tool, payment, reply }: ToolCall,
    answer: unknown,
  ): Promise<ToolResult> {
    const sale = await this.intake.open(request, reply, 2, () => toolPayment(payment, tool));
    const receipt = await this.intake.close(request, reply, sale, answer);
    const { amount, network } = sale.requirement;
    noteSale({ payer: sale.payer, amount, network });
    return answered(answer, settlementIn(receipt));
  }

  /** The route's 402 as the tool's: its resource, and its discovery as an MCP tool. */
  private forTool(required: PaymentRequired, tool: PaidTool): PaymentRequired {
    const description = `${tool.description} ${this.priceOf(tool)} per call, paid with x402.`;
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

  /** What the paywall threw, as the tool result that says it; nothing was charged but a 502. */
  private asResult(error: unknown, tool: PaidTool, extension: boolean): ToolResult {
    if (error instanceof ApiError) return failedWith(error);
    if (error instanceof PreparedResponseException) {
      const required = error.headers[PAYMENT_REQUIRED_HEADER];
      if (error.getStatus() === 402 && required !== undefined) {
        return paymentRequired(
          this.forTool(decodePaymentRequiredHeader(required), tool),
          extension,
        );
      }
      // the answer a payment-identifier already bought, again for free
      if (error.getStatus() === 200) return answered(error.body, settlementIn(error.headers));
    }
    throw error;
  }
}

/**
 * The request the paywall sees for a tool call: the tool's HTTP route with the call's
 * arguments (its offers, its prices), bound to the tool for payment-identifiers and metrics.
 */
function paidCallRequest(
  http: FastifyRequest,
  tool: PaidTool,
  path: string,
  args: string,
): RequestWithPayment {
  const request = Object.create(http) as RequestWithPayment;
  const headers = { ...http.headers };
  delete headers['payment-signature'];
  delete headers['x-payment'];
  Object.defineProperties(request, {
    method: { value: 'GET' },
    url: { value: path },
    headers: { value: headers },
    routeOptions: { value: { ...http.routeOptions, url: tool.route, method: 'GET' } },
    x402Call: {
      value: { route: `mcp:${tool.name}`, resource: `MCP ${tool.name} ${args}` },
    },
  });
  return request;
}

/**
 * `_meta["x402/payment"]` as a v2 PaymentPayload: a malformed one is 400 `invalid_payment`;
 * one made for another resource (an HTTP route, another tool) is refused with a 402.
 */
function toolPayment(payment: unknown, tool: PaidTool): PaymentPayload {
  if (
    !isRecord(payment) ||
    payment['x402Version'] !== 2 ||
    !isRecord(payment['accepted']) ||
    !isRecord(payment['payload'])
  ) {
    throw new ApiError(
      ErrorCode.InvalidPayment,
      `Malformed payment: _meta["${PAYMENT_META}"] must be an x402 v2 PaymentPayload with \`accepted\` and \`payload\` objects.`,
    );
  }
  const resource = payment['resource'];
  const url = isRecord(resource) ? resource['url'] : undefined;
  if (url !== undefined && url !== toolResourceUrl(tool)) {
    throw new PaymentRefusedError(
      `resource_mismatch: this payment was made for another resource, not ${toolResourceUrl(tool)}`,
    );
  }
  return withoutDiscoveryEcho(payment as unknown as PaymentPayload);
}

/**
 * The payment without its echo of the tool's bazaar declaration: the paywall checks echoes
 * against its HTTP route's declaration, and discovery info moves no money.
 */
function withoutDiscoveryEcho(payment: PaymentPayload): PaymentPayload {
  if (payment.extensions?.['bazaar'] === undefined) return payment;
  const extensions = { ...payment.extensions };
  delete extensions['bazaar'];
  return { ...payment, extensions };
}

/** The settlement a sale's receipt header carries. */
function settlementIn(headers: Readonly<Record<string, string>>) {
  const header = headers[PAYMENT_RESPONSE_HEADER];
  return header === undefined ? undefined : decodePaymentResponseHeader(header);
}
