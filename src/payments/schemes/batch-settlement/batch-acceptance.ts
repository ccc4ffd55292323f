import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import { getAddress, isAddress } from 'viem';
import { isRecord } from '../../../common/json.js';
import { PaymentRefusedError, offeredRequirement } from '../../paywall/offered-requirement.js';
import { isCanonicalSignature } from '../../../chain/ecdsa.js';
import { MalformedPaymentError } from '../../paywall/x402-wire.js';

/** The x402 scheme of payment channels: a deposit once, then a signed cumulative voucher per call. */
export const BATCH_SETTLEMENT = 'batch-settlement';

/** The immutable configuration that identifies a channel (its id is the config's EIP-712 hash). */
export interface ChannelConfig {
  readonly payer: `0x${string}`;
  readonly payerAuthorizer: `0x${string}`;
  readonly receiver: `0x${string}`;
  readonly receiverAuthorizer: `0x${string}`;
  readonly token: `0x${string}`;
  readonly withdrawDelay: number;
  readonly salt: `0x${string}`;
}

/**
 * A batch-settlement payment this service sells: the offered requirement (the service's own
 * object) and a deposit or voucher payload rebuilt from exactly the fields that were checked.
 */
export interface AcceptedBatchPayment {
  readonly payload: PaymentPayload;
  readonly requirement: PaymentRequirements;
  readonly kind: 'deposit' | 'voucher';
  readonly channelId: `0x${string}`;
  readonly payer: `0x${string}`;
  /** The cumulative amount this payment's voucher signs, and its signature. */
  readonly maxClaimableAmount: string;
  readonly signature: `0x${string}`;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const UINT = /^(0|[1-9]\d{0,77})$/;
/** uint128, canonical decimal */
const UINT128_MAX = (1n << 128n) - 1n;
const SIGNATURE = /^0x(?:[0-9a-fA-F]{2}){65,}$/;
const CONFIG_FIELDS = [
  'payer',
  'payerAuthorizer',
  'receiver',
  'receiverAuthorizer',
  'token',
  'withdrawDelay',
  'salt',
] as const;
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
/** The channel contract's withdrawDelay is a uint40. */
const UINT40_MAX = 2 ** 40 - 1;
/** A channel without a payer authorizer key: refused (see acceptBatchPayment). */
export const PAYER_AUTHORIZER_REQUIRED = 'invalid_batch_settlement_evm_payer_authorizer_required';

/**
 * Accepts a `batch-settlement` payment only in the shape this service offers: a `deposit`
 * (EIP-3009 authorization to the deposit collector, never Permit2) or a `voucher`, for a
 * channel whose receiver is X402_PAY_TO, whose receiver authorizer and withdraw delay are the
 * offered ones, in the offered token, whose vouchers a payer authorizer key signs, and whose id
 * is the config's hash on this network. Any other key, payload type (a client refund request,
 * say) or transfer method is refused before the scheme or a facilitator sees it. Whether the cumulative amount is the next one for the
 * channel is the channel state's question (server scheme, under the channel's lock).
 */
export function acceptBatchPayment(
  presented: PaymentPayload,
  requirement: PaymentRequirements,
): AcceptedBatchPayment {
  const raw = presented.payload as unknown;
  if (!isRecord(raw)) throw new MalformedPaymentError('payload must be an object');
  const type = raw['type'];
  if (type === 'refund') {
    throw new PaymentRefusedError(
      'invalid_batch_settlement_evm_payload_type: refunds are not sold here; idle channels are refunded by the seller, and a payer can always withdraw after the channel delay',
    );
  }
  if (type !== 'deposit' && type !== 'voucher') {
    throw new MalformedPaymentError('payload.type must be deposit or voucher');
  }
  exactKeys(
    raw,
    type === 'deposit'
      ? ['type', 'channelConfig', 'voucher', 'deposit']
      : ['type', 'channelConfig', 'voucher'],
    'payload',
  );
  const config = channelConfig(raw['channelConfig']);
  const voucher = voucherFields(raw['voucher']);
  const extra = requirement.extra;
  const refuse = (reason: string, why: string): never => {
    throw new PaymentRefusedError(`${reason}: ${why}`);
  };
  if (config.receiver.toLowerCase() !== requirement.payTo.toLowerCase()) {
    refuse('invalid_batch_settlement_evm_receiver_mismatch', 'the channel pays someone else');
  }
  if (
    typeof extra['receiverAuthorizer'] !== 'string' ||
    config.receiverAuthorizer.toLowerCase() !== extra['receiverAuthorizer'].toLowerCase()
  ) {
    refuse(
      'invalid_batch_settlement_evm_receiver_authorizer_mismatch',
      'the channel names another receiver authorizer',
    );
  }
  if (config.token.toLowerCase() !== requirement.asset.toLowerCase()) {
    refuse('invalid_batch_settlement_evm_token_mismatch', 'the channel holds another token');
  }
  if (config.withdrawDelay !== extra['withdrawDelay']) {
    refuse(
      'invalid_batch_settlement_evm_withdraw_delay_mismatch',
      'the channel has another withdraw delay',
    );
  }
  if (config.payer.toLowerCase() === ZERO_ADDRESS) {
    throw new MalformedPaymentError('payload.channelConfig.payer is the zero address');
  }
  if (config.payerAuthorizer.toLowerCase() === ZERO_ADDRESS) {
    // the payer's own signature would be checked on chain (ERC-1271) at each claim, and a
    // contract wallet can stop honouring it before then: one such voucher reverts a claim
    refuse(
      PAYER_AUTHORIZER_REQUIRED,
      'vouchers must be signed by a payer authorizer key (channelConfig.payerAuthorizer), not checked on chain by the payer contract',
    );
  }
  if (!isCanonicalSignature(voucher.signature)) {
    refuse(
      'invalid_batch_settlement_evm_voucher_signature',
      'the voucher signature is not 65 canonical bytes (low s): the channel contract would refuse it at claim time',
    );
  }
  // hashed only once the cheap checks against the offer passed
  const { config: canonical, id: channelId } = canonicalChannel(config, requirement.network);
  if (channelId.toLowerCase() !== voucher.channelId.toLowerCase()) {
    refuse(
      'invalid_batch_settlement_evm_channel_id_mismatch',
      'the voucher is for another channel than the config describes',
    );
  }
  const schemePayload: Record<string, unknown> = {
    type,
    channelConfig: canonical,
    voucher: { ...voucher, channelId },
  };
  if (type === 'deposit') schemePayload['deposit'] = depositFields(raw['deposit']);
  const payload: PaymentPayload = {
    x402Version: 2,
    accepted: requirement,
    payload: schemePayload,
    ...(presented.resource === undefined ? {} : { resource: presented.resource }),
    ...(presented.extensions === undefined ? {} : { extensions: presented.extensions }),
  };
  return {
    payload,
    requirement,
    kind: type,
    channelId,
    payer: canonical.payer,
    maxClaimableAmount: voucher.maxClaimableAmount,
    signature: voucher.signature,
  };
}

/** Whether a decoded v2 payment says it pays with batch settlement. */
export function isBatchPayment(presented: PaymentPayload): boolean {
  const accepted: unknown = presented.accepted;
  return isRecord(accepted) && accepted['scheme'] === BATCH_SETTLEMENT;
}

/** `acceptBatchPayment` against the offered requirement the payment's `accepted` is. */
export function acceptOfferedBatchPayment(
  presented: PaymentPayload,
  offered: readonly PaymentRequirements[],
): AcceptedBatchPayment {
  const requirement = offeredRequirement(presented, offered);
  if (requirement.scheme !== BATCH_SETTLEMENT) {
    throw new PaymentRefusedError(`unsupported_scheme: ${requirement.scheme}`);
  }
  return acceptBatchPayment(presented, requirement);
}

/**
 * Channel configs already checked, by their exact text and network: the canonical config (EIP-55
 * addresses, lower-case salt) and its id. Checksums and the id are keccak hashes in JS, worth not
 * repeating per voucher.
 */
const knownConfigs = new Map<string, { config: ChannelConfig; id: `0x${string}` }>();
const MAX_KNOWN_CONFIGS = 10_000;
const ADDRESS_FIELDS = [
  'payer',
  'payerAuthorizer',
  'receiver',
  'receiverAuthorizer',
  'token',
] as const;

/**
 * The channel config in its canonical form and its id on this network. Every record and claim
 * is built from this form: a config whose addresses differ only in case has the same id, and a
 * mixed-case address with a wrong EIP-55 checksum is malformed (the SDK's claim signer would
 * throw on it at claim time).
 */
function canonicalChannel(
  config: ChannelConfig,
  network: string,
): { config: ChannelConfig; id: `0x${string}` } {
  const key = `${network}|${CONFIG_FIELDS.map((field) => String(config[field])).join('|')}`;
  let known = knownConfigs.get(key);
  if (known === undefined) {
    const canonical: Record<string, unknown> = { ...config, salt: config.salt.toLowerCase() };
    for (const field of ADDRESS_FIELDS) {
      if (!isAddress(config[field], { strict: true })) {
        throw new MalformedPaymentError(
          `payload.channelConfig.${field} has a wrong EIP-55 checksum`,
        );
      }
      canonical[field] = getAddress(config[field]);
    }
    const canonicalConfig = canonical as unknown as ChannelConfig;
    known = { config: canonicalConfig, id: computeChannelId(canonicalConfig, network) };
    if (knownConfigs.size >= MAX_KNOWN_CONFIGS) knownConfigs.clear();
    knownConfigs.set(key, known);
  }
  return known;
}

function channelConfig(value: unknown): ChannelConfig {
  if (!isRecord(value)) throw new MalformedPaymentError('payload.channelConfig is missing');
  exactKeys(value, CONFIG_FIELDS, 'payload.channelConfig');
  for (const field of ADDRESS_FIELDS) {
    const address = value[field];
    if (typeof address !== 'string' || !ADDRESS.test(address)) {
      throw new MalformedPaymentError(`payload.channelConfig.${field} is malformed`);
    }
  }
  const { withdrawDelay, salt } = value;
  if (
    typeof withdrawDelay !== 'number' ||
    !Number.isSafeInteger(withdrawDelay) ||
    withdrawDelay < 0 ||
    withdrawDelay > UINT40_MAX
  ) {
    throw new MalformedPaymentError('payload.channelConfig.withdrawDelay is malformed');
  }
  if (typeof salt !== 'string' || !BYTES32.test(salt)) {
    throw new MalformedPaymentError('payload.channelConfig.salt is malformed');
  }
  return value as unknown as ChannelConfig;
}

function voucherFields(value: unknown): {
  channelId: `0x${string}`;
  maxClaimableAmount: string;
  signature: `0x${string}`;
} {
  if (!isRecord(value)) throw new MalformedPaymentError('payload.voucher is missing');
  exactKeys(value, ['channelId', 'maxClaimableAmount', 'signature'], 'payload.voucher');
  const { channelId, maxClaimableAmount, signature } = value;
  if (typeof channelId !== 'string' || !BYTES32.test(channelId)) {
    throw new MalformedPaymentError('payload.voucher.channelId is malformed');
  }
  if (!isUint128(maxClaimableAmount) || maxClaimableAmount === '0') {
    throw new MalformedPaymentError('payload.voucher.maxClaimableAmount is malformed');
  }
  if (typeof signature !== 'string' || !SIGNATURE.test(signature)) {
    throw new MalformedPaymentError('payload.voucher.signature is malformed');
  }
  return {
    channelId: channelId as `0x${string}`,
    maxClaimableAmount,
    signature: signature as `0x${string}`,
  };
}

function depositFields(value: unknown): Record<string, unknown> {
  if (!isRecord(value)) throw new MalformedPaymentError('payload.deposit is missing');
  exactKeys(value, ['amount', 'authorization'], 'payload.deposit');
  const { amount, authorization } = value;
  if (!isUint128(amount) || amount === '0') {
    throw new MalformedPaymentError('payload.deposit.amount is malformed');
  }
  if (!isRecord(authorization)) {
    throw new MalformedPaymentError('payload.deposit.authorization is missing');
  }
  // EIP-3009 only: the facilitator would pick Permit2 from a permit2Authorization's presence
  exactKeys(authorization, ['erc3009Authorization'], 'payload.deposit.authorization');
  const erc3009 = authorization['erc3009Authorization'];
  if (!isRecord(erc3009)) {
    throw new MalformedPaymentError(
      'payload.deposit.authorization.erc3009Authorization is missing',
    );
  }
  const fields = ['validAfter', 'validBefore', 'salt', 'signature'] as const;
  exactKeys(erc3009, fields, 'payload.deposit.authorization.erc3009Authorization');
  const { validAfter, validBefore, salt, signature } = erc3009;
  const where = 'payload.deposit.authorization.erc3009Authorization';
  if (typeof validAfter !== 'string' || !UINT.test(validAfter)) {
    throw new MalformedPaymentError(`${where}.validAfter is malformed`);
  }
  if (typeof validBefore !== 'string' || !UINT.test(validBefore)) {
    throw new MalformedPaymentError(`${where}.validBefore is malformed`);
  }
  if (typeof salt !== 'string' || !(BYTES32.test(salt) || UINT.test(salt))) {
    throw new MalformedPaymentError(`${where}.salt is malformed`);
  }
  if (typeof signature !== 'string' || !SIGNATURE.test(signature)) {
    throw new MalformedPaymentError(`${where}.signature is malformed`);
  }
  return {
    amount,
    authorization: { erc3009Authorization: { validAfter, validBefore, salt, signature } },
  };
}

function isUint128(value: unknown): value is string {
  return typeof value === 'string' && UINT.test(value) && BigInt(value) <= UINT128_MAX;
}

function exactKeys(record: Record<string, unknown>, keys: readonly string[], where: string): void {
  const missing = keys.find((key) => !(key in record));
  if (missing !== undefined) throw new MalformedPaymentError(`${where}.${missing} is missing`);
  const extra = Object.keys(record).find((key) => !keys.includes(key));
  if (extra !== undefined) throw new MalformedPaymentError(`unexpected field ${where}.${extra}`);
}
