import { isAddressEqual, parseAbi, parseEventLogs, type TransactionReceipt } from 'viem';

/** The two events an EIP-3009 token leaves when an authorization moves money. */
export const EIP3009_EVENTS = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
]);

export const EIP3009_STATE_ABI = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
]);

export type ReceiptEvidence = Pick<TransactionReceipt, 'status' | 'logs'>;

/**
 * An EIP-3009 transfer as the chain sees it: the token it is drawn on and the signed
 * authorization. Whoever sells with such transfers hands its payments over in this shape.
 */
export interface Eip3009Payment {
  readonly requirement: { readonly asset: string };
  readonly authorization: {
    readonly from: `0x${string}`;
    readonly to: `0x${string}`;
    readonly value: string;
    readonly validBefore: string;
    readonly nonce: `0x${string}`;
  };
}

/**
 * True only when the receipt shows the payment itself: the offered token emitted a `Transfer`
 * of exactly the price from the payer to the seller and `AuthorizationUsed(payer, nonce)`. A
 * "successful" transaction that moved nothing (a proxy with no code, a decoy) proves nothing.
 */
export function receiptProvesPayment(receipt: ReceiptEvidence, payment: Eip3009Payment): boolean {
  if (receipt.status !== 'success') return false;
  const asset = payment.requirement.asset as `0x${string}`;
  const { from, to, value, nonce } = payment.authorization;
  const events = parseEventLogs({
    abi: EIP3009_EVENTS,
    logs: receipt.logs,
    strict: true,
  }).filter((event) => isAddressEqual(event.address, asset));
  const transferred = events.some(
    (event) =>
      event.eventName === 'Transfer' &&
      isAddressEqual(event.args.from, from) &&
      isAddressEqual(event.args.to, to) &&
      event.args.value === BigInt(value),
  );
  const used = events.some(
    (event) =>
      event.eventName === 'AuthorizationUsed' &&
      isAddressEqual(event.args.authorizer, from) &&
      event.args.nonce.toLowerCase() === nonce.toLowerCase(),
  );
  return transferred && used;
}
