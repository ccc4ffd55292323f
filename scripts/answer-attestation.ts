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
export async function verifyAnswer(
  response: Response,
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
  const problem = await attestationProblem(
    response.headers.get(PRICE_ATTESTATION_HEADER),
    parsed,
    signer,
  );
  return problem === undefined
    ? { ok: true, line: `attestation ok (signer ${signer})` }
    : { ok: false, line: `attestation NOT ok: ${problem}` };
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
