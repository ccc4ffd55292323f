import { Injectable, Logger } from '@nestjs/common';
import type { PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { Channel } from '@x402/evm/batch-settlement/server';
import { PaymentIdentifiers } from '../../paywall/payment-identifiers.js';
import {
  SchemeSale,
  type SaleInProgress,
  type SaleOutcome,
  type SaleSettlement,
} from '../../paywall/seller-scheme.js';
import { channelState } from './voucher-charges.js';

/**
 * A voucher presented again under its payment-identifier whose channel record shows it sold for
 * this very call (PaidCallStamps), while no answer is stored under the id: the service stopped
 * between recording the voucher and storing or sending the answer (a crash, kill -9).
 */
export interface LostAnswer extends SaleInProgress {
  /** The channel record whose latest voucher this is. */
  readonly channel: Channel;
  readonly requirement: PaymentRequirements;
  readonly paymentId: string;
}

/**
 * Answers a lost answer's call again without charging it again: the handler's answer goes out
 * with the receipt of the recorded voucher and is stored under the id, as the first answer would
 * have been. Should the handler fail, the id is freed and the record still proves the sale.
 */
@Injectable()
export class LostAnswers implements SaleSettlement<LostAnswer> {
  private readonly logger = new Logger(LostAnswers.name);

  constructor(private readonly identifiers: PaymentIdentifiers) {}

  close(lost: LostAnswer): Promise<SaleOutcome> {
    this.logger.warn(
      `payment-identifier ${lost.paymentId}: the answer to the voucher recorded on ${lost.channel.channelId} was lost; answered again, charged nothing more`,
    );
    return Promise.resolve({ kind: 'settled', receipt: recordedReceipt(lost) });
  }

  giveBack(lost: LostAnswer): Promise<void> {
    return this.identifiers.release(lost.paymentId);
  }

  /** The sale of a lost answer, answered again by this settlement. */
  sale(lost: LostAnswer): SchemeSale<LostAnswer> {
    return new SchemeSale(lost, lost.requirement, lost.channel.channelConfig.payer, this);
  }
}

/** The receipt of a recorded voucher, in the shape the SDK gives one when it records it. */
function recordedReceipt({ channel, requirement }: LostAnswer): SettleResponse {
  return {
    success: true,
    payer: channel.channelConfig.payer.toLowerCase(),
    transaction: '',
    network: requirement.network,
    amount: '',
    extra: {
      channelState: channelState(channel, channel.chargedCumulativeAmount),
      chargedAmount: requirement.amount,
    },
  };
}
