import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { isRecord } from '../../common/json.js';
import { MalformedPaymentError } from './x402-wire.js';

/**
 * A well-formed payment for something this route does not sell: a 402 with the reason. Any
 * scheme throws it from `open` to refuse a payment; the guard answers it.
 */
export class PaymentRefusedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'PaymentRefusedError';
  }
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const V2_PAYLOAD_KEYS = new Set(['x402Version', 'accepted', 'payload', 'resource', 'extensions']);

/**
 * The offered requirement a payment's `accepted` is, field by field (400 for a top-level key
 * the protocol does not have, 402 when it is not one of `offered`).
 */
export function offeredRequirement(
  presented: PaymentPayload,
  offered: readonly PaymentRequirements[],
): PaymentRequirements {
  const extraKey = Object.keys(presented).find((key) => !V2_PAYLOAD_KEYS.has(key));
  if (extraKey !== undefined) throw new MalformedPaymentError(`unexpected field \`${extraKey}\``);
  const requirement = offered.find((candidate) => sameRequirement(presented.accepted, candidate));
  if (requirement === undefined) {
    throw new PaymentRefusedError(
      'payment_not_offered: `accepted` is not one of the requirements this resource is sold for',
    );
  }
  return requirement;
}

/** Field by field, addresses in any letter case, `extra` and every other field exactly. */
function sameRequirement(presented: unknown, offered: PaymentRequirements): boolean {
  if (!isRecord(presented)) return false;
  const keys = Object.keys(offered);
  if (Object.keys(presented).length !== keys.length) return false;
  return keys.every((key) => {
    const mine = (offered as unknown as Record<string, unknown>)[key];
    const theirs = presented[key];
    if (typeof mine === 'string' && ADDRESS.test(mine)) {
      return typeof theirs === 'string' && theirs.toLowerCase() === mine.toLowerCase();
    }
    return canonicalJson(theirs) === canonicalJson(mine);
  });
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isRecord(value)) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`);
    return `{${entries.join(',')}}`;
  }
  return value === undefined ? 'undefined' : JSON.stringify(value);
}
