import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { Eip3009Authorization } from '../../../chain/eip3009-authorization.js';
import { isRecord } from '../../../common/json.js';
import { MalformedPaymentError } from '../../paywall/x402-wire.js';
import { PaymentRefusedError, offeredRequirement } from '../../paywall/offered-requirement.js';

/** The EIP-3009 authorization an `exact` EVM payment carries, exactly as it will be settled. */
export type ExactEvmAuthorization = Eip3009Authorization;

/**
 * A payment this service sells: one offered requirement (the service's own object, never the
 * client's copy) and the signed EIP-3009 transfer, rebuilt from exactly the fields it checked.
 */
export interface AcceptedPayment {
  readonly payload: PaymentPayload;
  readonly requirement: PaymentRequirements;
  readonly authorization: ExactEvmAuthorization;
  readonly signature: `0x${string}`;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
/** Canonical decimals only: "02000" would be a second spelling of one amount. */
const UINT = /^(0|[1-9]\d{0,77})$/;
const AUTHORIZATION_FIELDS: Readonly<Record<keyof ExactEvmAuthorization, RegExp>> = {
  from: ADDRESS,
  to: ADDRESS,
  value: UINT,
  validAfter: UINT,
  validBefore: UINT,
  nonce: /^0x[0-9a-fA-F]{64}$/,
};
/** 65-byte ECDSA, or longer for smart-wallet (ERC-1271 / ERC-6492) signatures. */
const SIGNATURE = /^0x(?:[0-9a-fA-F]{2}){65,}$/;
const EXACT_EVM_KEYS = ['authorization', 'signature'] as const;

/** Allowance for a buyer's clock running ahead of ours when checking validBefore. */
const CLOCK_SKEW_S = 300;

/**
 * Accepts a payment only in the exact shape of an offered requirement: `accepted` equal to one
 * of `offered`, and for `exact` on EVM exactly `{signature, authorization}` with the six
 * EIP-3009 fields, paying the offered amount to the offered address. Any other key, transfer
 * method (a Permit2 payload, say) or scheme is refused here, before a facilitator sees it,
 * because the facilitator picks its transfer method from the payload's shape. An authorization
 * valid for longer than the offered `maxTimeoutSeconds` (plus clock skew) is refused too: the
 * ledger and the reconciler keep a payment until it can no longer settle, and that must be soon.
 */
export function acceptPayment(
  presented: PaymentPayload,
  offered: readonly PaymentRequirements[],
  nowMs: number = Date.now(),
): AcceptedPayment {
  return acceptExactPayment(presented, offeredRequirement(presented, offered), nowMs);
}

/** `acceptPayment` once the offered requirement the payment's `accepted` is has been found. */
export function acceptExactPayment(
  presented: PaymentPayload,
  requirement: PaymentRequirements,
  nowMs: number = Date.now(),
): AcceptedPayment {
  if (requirement.scheme !== 'exact' || !requirement.network.startsWith('eip155:')) {
    throw new PaymentRefusedError(`unsupported_scheme: ${requirement.scheme}`);
  }
  const { authorization, signature } = exactEvmPayload(presented.payload);
  if (authorization.to.toLowerCase() !== requirement.payTo.toLowerCase()) {
    throw new PaymentRefusedError(
      'invalid_exact_evm_recipient_mismatch: the authorization pays someone else',
    );
  }
  if (authorization.value !== requirement.amount) {
    throw new PaymentRefusedError(
      `invalid_exact_evm_payload_authorization_value_mismatch: the price is ${requirement.amount}, the authorization is for ${authorization.value}`,
    );
  }
  const latestValidBefore = Math.floor(nowMs / 1000) + requirement.maxTimeoutSeconds + CLOCK_SKEW_S;
  if (BigInt(authorization.validBefore) > BigInt(latestValidBefore)) {
    throw new PaymentRefusedError(
      `invalid_exact_evm_payload_authorization_valid_before: an authorization may stay valid for at most ${requirement.maxTimeoutSeconds} s`,
    );
  }
  const payload: PaymentPayload = {
    x402Version: 2,
    accepted: requirement,
    payload: { signature, authorization: { ...authorization } },
    ...(presented.resource === undefined ? {} : { resource: presented.resource }),
    ...(presented.extensions === undefined ? {} : { extensions: presented.extensions }),
  };
  return { payload, requirement, authorization, signature };
}

/** `{signature, authorization}` and nothing else; each field in its one canonical spelling. */
export function exactEvmPayload(schemePayload: unknown): {
  authorization: ExactEvmAuthorization;
  signature: `0x${string}`;
} {
  if (!isRecord(schemePayload)) throw new MalformedPaymentError('payload must be an object');
  exactKeys(schemePayload, EXACT_EVM_KEYS, 'payload');
  const { authorization, signature } = schemePayload;
  if (typeof signature !== 'string' || !SIGNATURE.test(signature)) {
    throw new MalformedPaymentError('payload.signature must be a 0x-prefixed hex signature');
  }
  if (!isRecord(authorization)) throw new MalformedPaymentError('payload.authorization is missing');
  const fields = Object.keys(AUTHORIZATION_FIELDS) as (keyof ExactEvmAuthorization)[];
  exactKeys(authorization, fields, 'payload.authorization');
  for (const field of fields) {
    const value = authorization[field];
    if (typeof value !== 'string' || !AUTHORIZATION_FIELDS[field].test(value)) {
      throw new MalformedPaymentError(`payload.authorization.${field} is malformed`);
    }
  }
  return {
    authorization: authorization as unknown as ExactEvmAuthorization,
    signature: signature as `0x${string}`,
  };
}

/**
 * Identity of a payment: what the token itself makes single-use (network, token, payer,
 * EIP-3009 nonce), so re-encoding one authorization (letter case, the other protocol header)
 * cannot turn it into a second payment.
 */
export function paymentFingerprint(payment: AcceptedPayment): string {
  const { network, asset } = payment.requirement;
  const { from, nonce } = payment.authorization;
  return [network, asset, from, nonce].map((part) => part.toLowerCase()).join('|');
}

/** Until when a payment could still settle (its validBefore), plus a minute for clock skew. */
export function paymentExpiry(payment: AcceptedPayment): number {
  return Number(payment.authorization.validBefore) * 1000 + 60_000;
}

function exactKeys(record: Record<string, unknown>, keys: readonly string[], where: string): void {
  const extra = Object.keys(record).find((key) => !keys.includes(key));
  if (extra !== undefined) throw new MalformedPaymentError(`unexpected field ${where}.${extra}`);
}
