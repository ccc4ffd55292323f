import type { PaymentPayload, PaymentRequired, SettleResponse } from '@x402/core/types';
import { isRecord } from '../../common/json.js';
import { networkFromV1Name, v1NetworkName } from '../networks/known-networks.js';

/** Request header names of the two protocol generations, lower-case as Node presents them. */
export const PAYMENT_SIGNATURE_HEADER = 'payment-signature';
export const X_PAYMENT_HEADER = 'x-payment';
export const PAYMENT_REQUIRED_HEADER = 'PAYMENT-REQUIRED';
export const PAYMENT_RESPONSE_HEADER = 'PAYMENT-RESPONSE';
export const X_PAYMENT_RESPONSE_HEADER = 'X-PAYMENT-RESPONSE';

/**
 * A payment header larger than this is refused before decoding. A payment echoes its 402's
 * extensions (the answer's schema for discovery): a ticker's channel deposit is about 5 KiB, a
 * 25-field market answer's about 9 KiB; Node's own limit for all of a request's headers is 16 KiB.
 */
const MAX_HEADER_LENGTH = 12 * 1024;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export type ProtocolVersion = 1 | 2;

/** The header a client paid with, if any; v2's PAYMENT-SIGNATURE wins over v1's X-PAYMENT. */
export function presentedPaymentHeader(
  getHeader: (name: string) => string | undefined,
): { readonly version: ProtocolVersion; readonly value: string } | undefined {
  const v2 = getHeader(PAYMENT_SIGNATURE_HEADER);
  if (v2 !== undefined) return { version: 2, value: v2 };
  const v1 = getHeader(X_PAYMENT_HEADER);
  return v1 === undefined ? undefined : { version: 1, value: v1 };
}

export class MalformedPaymentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedPaymentError';
  }
}

/**
 * JSON → base64, the encoding of every x402 header. The SDK's own encoders produce the same
 * bytes through `btoa` and a per-byte string join, which was the largest single cost of a
 * batch-settlement voucher (5% of the server's CPU).
 */
export function encodeHeaderJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

/** base64(JSON) → object, refusing anything oversized, not base64, not JSON or not an object. */
export function decodeHeaderJson(value: string, header: string): Record<string, unknown> {
  const trimmed = value.trim();
  if (trimmed.length === 0) throw new MalformedPaymentError(`${header} is empty`);
  if (trimmed.length > MAX_HEADER_LENGTH) {
    throw new MalformedPaymentError(`${header} is longer than ${MAX_HEADER_LENGTH} characters`);
  }
  if (!BASE64.test(trimmed)) throw new MalformedPaymentError(`${header} is not base64`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(trimmed, 'base64').toString('utf8'));
  } catch {
    throw new MalformedPaymentError(`${header} does not decode to JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new MalformedPaymentError(`${header} does not decode to a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

/** A v2 PAYMENT-SIGNATURE header, checked for the fields the server relies on. */
export function decodeV2Payment(value: string): PaymentPayload {
  const decoded = decodeHeaderJson(value, 'PAYMENT-SIGNATURE');
  if (decoded.x402Version !== 2)
    throw new MalformedPaymentError('PAYMENT-SIGNATURE must carry x402Version 2');
  if (!isRecord(decoded.accepted) || !isRecord(decoded.payload)) {
    throw new MalformedPaymentError('PAYMENT-SIGNATURE needs `accepted` and `payload` objects');
  }
  return decoded as unknown as PaymentPayload;
}

/** A v1 X-PAYMENT header's fields, before it is paired with what the route offers. */
export interface V1Payment {
  readonly scheme: string;
  readonly network: string;
  readonly payload: Record<string, unknown>;
}

/** A v1 X-PAYMENT header, checked for the fields the server relies on. */
export function decodeV1Header(value: string): V1Payment {
  const decoded = decodeHeaderJson(value, 'X-PAYMENT');
  if (decoded.x402Version !== 1)
    throw new MalformedPaymentError('X-PAYMENT must carry x402Version 1');
  const { scheme, network, payload } = decoded;
  if (typeof scheme !== 'string' || typeof network !== 'string' || !isRecord(payload)) {
    throw new MalformedPaymentError('X-PAYMENT needs `scheme`, `network` and `payload`');
  }
  return { scheme, network, payload };
}

/**
 * A v1 payment in its v2 form: the signed scheme payload is the same in both generations, so
 * it is paired with the v2 requirement it answers (same scheme and network).
 */
export function pairV1Payment(
  { scheme, network, payload }: V1Payment,
  accepts: readonly PaymentPayload['accepted'][],
): PaymentPayload {
  const caip2 = networkFromV1Name(network);
  const accepted = accepts.find(
    (candidate) => candidate.scheme === scheme && candidate.network === caip2,
  );
  if (accepted === undefined) {
    throw new MalformedPaymentError(`this resource is not sold for scheme ${scheme} on ${network}`);
  }
  return { x402Version: 2, accepted, payload };
}

/** A v1 X-PAYMENT header in its v2 form, paired with one of `accepts`. */
export function decodeV1Payment(
  value: string,
  accepts: readonly PaymentPayload['accepted'][],
): PaymentPayload {
  return pairV1Payment(decodeV1Header(value), accepts);
}

/** The v1-shaped 402 body that sits beside the v2 PAYMENT-REQUIRED header. */
export function toV1PaymentRequired(
  required: PaymentRequired,
  outputSchema: Record<string, unknown>,
  offeredToV1: (scheme: string, network: string) => boolean,
) {
  return {
    x402Version: 1 as const,
    error: required.error ?? 'Payment required',
    // only what v1 clients know (x402-fetch 1.x rejects the whole 402 on a scheme it does
    // not); the other schemes are offered to v2 clients in the PAYMENT-REQUIRED header
    accepts: required.accepts
      .filter((accept) => offeredToV1(accept.scheme, accept.network))
      .map((accept) => ({
        scheme: accept.scheme,
        network: v1NetworkName(accept.network),
        maxAmountRequired: accept.amount,
        resource: required.resource.url,
        description: required.resource.description ?? '',
        mimeType: required.resource.mimeType ?? 'application/json',
        outputSchema,
        payTo: accept.payTo,
        maxTimeoutSeconds: accept.maxTimeoutSeconds,
        asset: accept.asset,
        extra: accept.extra,
      })),
  };
}

/** A paid 200's headers: the settlement receipt, and never a cached copy. */
export function receiptHeaders(
  version: ProtocolVersion,
  settlement: SettleResponse,
): Record<string, string> {
  const [name, value] = receiptHeader(version, settlement);
  return { [name]: value, 'cache-control': 'private, no-store' };
}

/** The receipt header for the generation the client paid with. */
export function receiptHeader(
  version: ProtocolVersion,
  settlement: SettleResponse,
): [string, string] {
  if (version === 2) {
    // as the SDK's encodePaymentResponseHeader: extension responses are not for the buyer
    const buyerFacing: Record<string, unknown> = { ...settlement };
    delete buyerFacing['extensionResponses'];
    return [PAYMENT_RESPONSE_HEADER, encodeHeaderJson(buyerFacing)];
  }
  const v1 = {
    success: settlement.success,
    transaction: settlement.transaction,
    network: v1NetworkName(settlement.network),
    payer: settlement.payer,
    ...(settlement.errorReason === undefined ? {} : { errorReason: settlement.errorReason }),
  };
  return [X_PAYMENT_RESPONSE_HEADER, encodeHeaderJson(v1)];
}

/** The settlement as the receipt header carries it: the SDK's answer without its internals. */
export function receiptFields(
  result: Pick<
    SettleResponse,
    'success' | 'transaction' | 'network' | 'payer' | 'errorReason' | 'extensions'
  >,
): SettleResponse {
  return {
    success: result.success,
    transaction: result.transaction,
    network: result.network,
    ...(result.payer === undefined ? {} : { payer: result.payer }),
    ...(result.errorReason === undefined ? {} : { errorReason: result.errorReason }),
    // what the buyer asked extensions for, such as an offer-receipt receipt
    ...(result.extensions === undefined ? {} : { extensions: result.extensions }),
  };
}
