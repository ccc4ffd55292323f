/** How `npm run client` prints a purchase: the receipt, what was paid, the body, an error. */
import { findDefaultAsset } from '@x402/evm';
import { decodePaymentResponseHeader, type PaymentRequirements } from '@x402/fetch';
import { formatUnits } from 'viem';

type Receipt = ReturnType<typeof decodePaymentResponseHeader>;

export function paymentReceipt(response: Response): Receipt | undefined {
  const header = response.headers.get('PAYMENT-RESPONSE');
  if (header === null) return undefined;
  try {
    return decodePaymentResponseHeader(header);
  } catch {
    return undefined;
  }
}

/** The settlement transaction; for a batch-settlement voucher, the channel it was recorded in. */
export function describeSettlement(receipt: Receipt | undefined): string {
  if (receipt === undefined) return 'settlement: no PAYMENT-RESPONSE header in the answer';
  const state = (receipt.extra as { channelState?: Record<string, unknown> } | undefined)
    ?.channelState;
  const channel =
    state === undefined
      ? ''
      : `channel ${String(state['channelId'])}: ${String(state['chargedCumulativeAmount'])} charged of ${String(state['balance'])} deposited`;
  if (receipt.transaction === '') return `voucher recorded, no transaction; ${channel}`;
  const tx = `settlement tx ${receipt.transaction} on ${receipt.network}`;
  return channel === '' ? tx : `${tx} (deposit); ${channel}`;
}

/** "paid 0.002 USDC (2000 atomic) to 0x…": decimal for a known token, atomic always. */
export function describePaid(requirements: PaymentRequirements): string {
  const { amount, asset, network, payTo } = requirements;
  const known = findDefaultAsset(asset, network);
  const value =
    known === undefined
      ? `${amount} atomic units of ${asset}`
      : `${formatUnits(BigInt(amount), known.decimals)} ${known.symbol} (${amount} atomic)`;
  return `paid ${value} to ${payTo} on ${network}`;
}

export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** undici hides the reason (ECONNREFUSED, ...) in `cause`; errors may come from another realm. */
export function describeError(error: unknown): string {
  const { message, cause } = (error ?? {}) as { message?: unknown; cause?: unknown };
  if (typeof message !== 'string') return String(error);
  const { message: causeMessage, code } = (cause ?? {}) as { message?: unknown; code?: unknown };
  const reason = typeof causeMessage === 'string' && causeMessage !== '' ? causeMessage : code;
  return typeof reason === 'string' ? `${message}: ${reason}` : message;
}
