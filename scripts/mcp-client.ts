/**
 * `npm run client -- --mcp …`: the same purchases as MCP tool calls, through the MCP SDK's
 * client over Streamable HTTP (`POST /mcp`): the unpaid call answers with the PaymentRequired,
 * `@x402/core`'s client signs a payment for it, the paid retry carries it in
 * `_meta["x402/payment"]` and the answer the settlement in `_meta["x402/payment-response"]`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import type { x402Client } from '@x402/fetch';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { verifyAttestation } from './answer-attestation.js';
import type { ClientOptions } from './client.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from './paid-get.js';
import { describeError, describePaid, describeSettlement } from './purchase-lines.js';

/** A tool call a command stands for. */
export interface ToolCallCommand {
  readonly tool: string;
  readonly args: Record<string, unknown>;
}

/** What one paid tool call gave: its answer, what was paid, and the settlement. */
export type ToolPurchase =
  | {
      readonly ok: true;
      readonly body: unknown;
      readonly paid: PaymentRequired['accepts'][number] | undefined;
      readonly settlement: SettleResponse | undefined;
      /** The answer's `_meta["x402/price-attestation"]`, if it carried one. */
      readonly attestation: string | undefined;
    }
  | { readonly ok: false; readonly problem: unknown };

/**
 * The tool a route's request stands for, with its arguments: `/v1/ticker/BTC` → get_ticker
 * {symbol: BTC}, `/v1/ohlc/BTC?interval=1h` → get_ohlc {symbol: BTC, interval: 1h}, and so on (a
 * tool's arguments are its route's path and query parameters).
 */
export function toolCallFor(path: string): ToolCallCommand | undefined {
  const url = new URL(path, 'http://client.invalid');
  const [, , kind, item] = url.pathname.split('/');
  const decoded = item === undefined ? undefined : decodeURIComponent(item);
  const query = Object.fromEntries(url.searchParams);
  if (kind === 'all-tickers') return { tool: 'get_all_tickers', args: {} };
  if (decoded === undefined) return undefined;
  switch (kind ?? '') {
    case 'ticker':
      return { tool: 'get_ticker', args: { symbol: decoded } };
    case 'tickers':
      return { tool: 'get_tickers', args: { symbols: decoded.split(',') } };
    case 'markets':
      return { tool: 'get_markets', args: { symbols: decoded } };
    case 'ohlc':
      return { tool: 'get_ohlc', args: { symbol: decoded, ...query } };
    case 'price-at':
      return { tool: 'get_price_at', args: { symbol: decoded, ...query } };
    default:
      return undefined;
  }
}

/** Calls the tool unpaid, pays what it asks with `payer`, and calls it again with the payment. */
export async function buyTool(
  apiUrl: string,
  { tool, args }: ToolCallCommand,
  payer: x402Client,
): Promise<ToolPurchase> {
  const client = new Client({ name: 'x402-price-api-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${apiUrl}/mcp`)));
  try {
    const unpaid = await client.callTool({ name: tool, arguments: args });
    const required = unpaid.structuredContent as PaymentRequired | undefined;
    if (unpaid.isError !== true || required?.x402Version === undefined) {
      return unpaid.isError === true
        ? { ok: false, problem: unpaid.structuredContent }
        : {
            ok: true,
            body: unpaid.structuredContent,
            paid: undefined,
            settlement: undefined,
            attestation: attestationIn(unpaid),
          };
    }
    let payment = await payer.createPaymentPayload(required);
    let paid = await payTool(client, tool, args, payment);
    const refusal = paymentRequiredIn(paid);
    if (refusal !== undefined) {
      // the scheme may recover (a batch channel resyncs its cumulative amount): then once more
      const recovery = await payer.handlePaymentResponse({
        paymentPayload: payment,
        requirements: payment.accepted,
        paymentRequired: refusal,
        error: new Error(refusal.error ?? 'payment refused'),
      });
      if (recovery?.recovered === true) {
        payment = await payer.createPaymentPayload(refusal);
        paid = await payTool(client, tool, args, payment);
      }
    }
    const settlement = paid._meta?.['x402/payment-response'] as SettleResponse | undefined;
    // a batch-settlement client keeps its channel's state from the settlement
    await payer.handlePaymentResponse({
      paymentPayload: payment,
      requirements: payment.accepted,
      ...(settlement === undefined ? {} : { settleResponse: settlement }),
    });
    if (paid.isError === true) return { ok: false, problem: paid.structuredContent };
    return {
      ok: true,
      body: paid.structuredContent,
      paid: payment.accepted,
      settlement,
      attestation: attestationIn(paid),
    };
  } finally {
    await client.close();
  }
}

type ToolAnswer = Awaited<ReturnType<Client['callTool']>>;

function payTool(
  client: Client,
  tool: string,
  args: Record<string, unknown>,
  payment: unknown,
): Promise<ToolAnswer> {
  return client.callTool({ name: tool, arguments: args, _meta: { 'x402/payment': payment } });
}

/** The attestation a tool result carries in its `_meta`, if any. */
function attestationIn(answer: ToolAnswer): string | undefined {
  const value = answer._meta?.['x402/price-attestation'];
  return typeof value === 'string' ? value : undefined;
}

/** The PaymentRequired a tool error carries (a refused payment), if it is one. */
function paymentRequiredIn(answer: ToolAnswer): PaymentRequired | undefined {
  const content = answer.structuredContent as Partial<PaymentRequired> | undefined;
  return answer.isError === true && content?.x402Version !== undefined
    ? (content as PaymentRequired)
    : undefined;
}

/** The purchase as a paid MCP tool call: the answer, what was paid and the settlement. */
export async function buyOverMcp(
  apiUrl: string,
  privateKey: Hex,
  routePath: string,
  payer: x402Client,
  options: ClientOptions,
): Promise<number> {
  const call = toolCallFor(routePath);
  if (call === undefined) {
    options.err(`no MCP tool sells ${routePath}`);
    return EXIT_USAGE;
  }
  const buyer = privateKeyToAccount(privateKey).address;
  options.out(`MCP ${call.tool} ${JSON.stringify(call.args)} on ${apiUrl}/mcp  (buyer ${buyer})`);
  let purchase: Awaited<ReturnType<typeof buyTool>>;
  try {
    purchase = await buyTool(apiUrl, call, payer);
  } catch (error) {
    options.err(`Request failed: ${describeError(error)}`);
    return EXIT_FAILED;
  }
  if (!purchase.ok) {
    options.err(`tool error: ${JSON.stringify(purchase.problem, null, 2)}`);
    return EXIT_FAILED;
  }
  options.out(JSON.stringify(purchase.body, null, 2));
  options.out(
    purchase.paid === undefined
      ? 'paid nothing: no payment was asked for'
      : describePaid(purchase.paid),
  );
  options.out(describeSettlement(purchase.settlement));
  // a tool's answer is checked like an HTTP one, its attestation taken from the result's _meta
  const verdict = await verifyAttestation(
    purchase.attestation ?? null,
    JSON.stringify(purchase.body),
    `${apiUrl}/.well-known/price-attestation`,
    options.fetch ?? fetch,
  );
  (verdict.ok ? options.out : options.err)(verdict.line);
  return verdict.ok ? EXIT_OK : EXIT_FAILED;
}
