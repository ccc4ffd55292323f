/**
 * The vouchers of the streams bench (streams-section.ts): every stream on a channel signs a
 * fresh one, the charged total plus a budget above the channel's last cover, as the service
 * asks of every stream and reconnect.
 */
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequirements } from '@x402/core/types';
import { signVoucher, type BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import type { PrivateKeyAccount } from 'viem/accounts';

const UNIT = 100n;

/** A buyer's channel: its scheme (its record), its payer authorizer key, its last cover. */
export interface PayingChannel {
  readonly scheme: BatchSettlementEvmScheme;
  readonly account: PrivateKeyAccount;
  cover: bigint;
}

/**
 * A fresh voucher for one more stream on `buyer`'s channel: `charged` plus a budget that takes
 * the cover above its last one (the service refuses a voucher that was a cover).
 */
export async function streamVoucher(
  buyer: PayingChannel,
  requirement: PaymentRequirements,
  charged: bigint,
  budget: bigint,
): Promise<Record<string, string>> {
  let signed = budget;
  while (charged + signed <= buyer.cover) signed += UNIT;
  const first = await buyer.scheme.createPaymentPayload(2, { ...requirement, amount: '100' });
  const { channelConfig, voucher } = first.payload as {
    channelConfig: object;
    voucher: { channelId: `0x${string}` };
  };
  const max = charged + signed;
  buyer.cover = max;
  return {
    'payment-signature': encodePaymentSignatureHeader({
      x402Version: 2,
      accepted: { ...requirement, amount: signed.toString() },
      payload: {
        type: 'voucher',
        channelConfig,
        voucher: await signVoucher(
          buyer.account,
          voucher.channelId,
          max.toString(),
          requirement.network,
        ),
      },
    }),
  };
}

/** The charged total a 402's reason names (a voucher signed on an old one), if it does. */
export function chargedNamed(reason: string): bigint | undefined {
  const named = (/charged total(?: is|) \(?(\d+)\)?/.exec(reason) ??
    /the (\d+) already charged/.exec(reason))?.[1];
  return named === undefined ? undefined : BigInt(named);
}
