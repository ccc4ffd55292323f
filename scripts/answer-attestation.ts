import { createHash } from 'node:crypto';
import type { Address } from 'viem';
import {
  PRICE_ATTESTATION_HEADER,
  attestationProblem,
  type PricedBody,
} from '../src/attestation/price-attestation.js';

/** What the client says about a bought answer's attestation, and whether it holds. */
export interface AttestationVerdict {
  readonly ok: boolean;
  readonly line: string;
}

/**
 * Checks a bought answer against the signer the service publishes at `infoUrl`
 * (GET /.well-known/price-attestation): the signature is that signer's and the signed prices
 * are the body's.
 */
export function verifyAnswer(
  response: Response,
  body: string,
  infoUrl: string,
  fetchImpl: typeof fetch,
): Promise<AttestationVerdict> {
  return verifyAttestation(
    response.headers.get(PRICE_ATTESTATION_HEADER),
    body,
    infoUrl,
    fetchImpl,
  );
}

/**
 * Checks an attestation as it came with an answer (the HTTP header's value, or an MCP tool
 * result's `_meta["x402/price-attestation"]`) against the signer published at `infoUrl`.
 */
export async function verifyAttestation(
  attestation: string | null,
  body: string,
  infoUrl: string,
  fetchImpl: typeof fetch,
): Promise<AttestationVerdict> {
  let info: { enabled?: unknown; signer?: unknown };
  try {
    const published = await fetchImpl(infoUrl);
    if (!published.ok) throw new Error(`HTTP ${published.status}`);
    info = (await published.json()) as typeof info;
  } catch (error) {
    return { ok: false, line: `attestation not checked: ${infoUrl}: ${String(error)}` };
  }
  if (info.enabled === false) {
    return { ok: true, line: 'attestation: this service does not sign its answers' };
  }
  if (typeof info.signer !== 'string') {
    return { ok: false, line: `attestation not checked: ${infoUrl} names no signer` };
  }
  const signer = info.signer as Address;
  let parsed: PricedBody;
  try {
    parsed = pricedView(JSON.parse(body) as PricedBody & MarketsBody);
  } catch {
    return { ok: false, line: 'attestation NOT ok: the body is not JSON' };
  }
  const problem = await attestationProblem(attestation, signedView(parsed), signer);
  return problem === undefined
    ? { ok: true, line: `attestation ok (signer ${signer})` }
    : { ok: false, line: `attestation NOT ok: ${problem}` };
}

/** A candle answer (`getOhlc`) as its attestation signs it: one point naming the candles' digest. */
interface CandlesBody extends PricedBody {
  readonly symbol: string;
  readonly interval: string;
  readonly candles: readonly { readonly close: number }[];
}

/**
 * The prices the attestation of `body` signs: the body's own, or for candles the point
 * `<SYMBOL>:<interval>:<sha256 of JSON.stringify(candles)>` at the last close, computed here
 * so a candle the service did not sign fails the check (docs/attestations.md).
 */
function signedView(body: PricedBody): PricedBody {
  const candles = (body as Partial<CandlesBody>).candles;
  if (!Array.isArray(candles) || candles.length === 0) return body;
  const { symbol, interval } = body as CandlesBody;
  const digest = createHash('sha256').update(JSON.stringify(candles)).digest('hex');
  const last = candles[candles.length - 1] as { close: number };
  return {
    timestamp: body.timestamp,
    currency: body.currency,
    price: { [`${symbol}:${interval}:${digest}`]: last.close },
  };
}

/** A market-statistics body (`getMarkets`): its signed values are each symbol's `price`. */
interface MarketsBody {
  readonly markets?: Readonly<Record<string, { readonly price: number }>>;
}

/** The prices a body's attestation signs, in the body's order. */
function pricedView(body: PricedBody & MarketsBody): PricedBody {
  if (body.markets === undefined) return body;
  const prices = Object.fromEntries(
    Object.entries(body.markets).map(([symbol, market]) => [symbol, market.price]),
  );
  return { timestamp: body.timestamp, currency: body.currency, prices };
}
