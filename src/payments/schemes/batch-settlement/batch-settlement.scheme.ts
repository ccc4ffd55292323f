import { Logger } from '@nestjs/common';
import type { Network, SchemeNetworkServer } from '@x402/core/types';
import { asPaymentError } from '../../paywall/payment-errors.js';
import { PaymentIdentifiers, paymentIdOf } from '../../paywall/payment-identifiers.js';
import type { PaidRoute } from '../../paywall/paid-routes.js';
import { PaymentVerification } from '../../paywall/payment-verification.js';
import {
  SchemeSale,
  SellerScheme,
  type OpenSale,
  type PresentedPayment,
  type SaleContext,
  type SellerSchemePlugin,
} from '../../paywall/seller-scheme.js';
import { BATCH_SETTLEMENT, acceptBatchPayment } from './batch-acceptance.js';
import { BatchChannels } from './batch-channels.js';
import { BatchMetering } from './batch-metering.js';
import { BatchSettlement, type BatchPaymentInProgress } from './batch-settlement.js';
import { LostAnswers } from './lost-answers.js';

/**
 * `batch-settlement` on EVM: the buyer deposits into a payment channel once, then signs a
 * cumulative voucher per call; vouchers are recorded in the channel state (no chain call) and
 * claimed on chain in rounds. v2 clients only. No ledger claim: the channel state serializes a
 * channel's vouchers (the server scheme reserves the channel under its lock, and a second
 * voucher on the same base is stale).
 */
@SellerScheme()
export class BatchSettlementScheme implements SellerSchemePlugin {
  readonly scheme = BATCH_SETTLEMENT;
  readonly offeredToV1 = false;
  private readonly logger = new Logger(BatchSettlementScheme.name);

  constructor(
    private readonly channels: BatchChannels,
    private readonly verification: PaymentVerification,
    private readonly identifiers: PaymentIdentifiers,
    private readonly settlement: BatchSettlement,
    private readonly lostAnswers: LostAnswers,
    /** Channels also pay per update delivered (a price stream): see BatchMetering. */
    readonly metering: BatchMetering,
  ) {}

  /** The channel contracts live on EVM networks. */
  serves(network: string): boolean {
    return network.startsWith('eip155:');
  }

  serverScheme(network: Network): SchemeNetworkServer {
    return this.channels.scheme(network);
  }

  /**
   * The deposit every batch offer asks for is sized by the prices of the routes sold per call: a
   * metered route's price is per unit (a stream's update), and its buyer's cover is its budget.
   */
  sells(routes: readonly PaidRoute[]): void {
    const perCall = routes.filter(({ meteredUnit }) => meteredUnit === undefined);
    this.channels.sizeDeposits(perCall.map(({ price }) => price));
  }

  startSelling(): void {
    this.channels.startClaims();
  }

  /**
   * A voucher is checked locally against the channel state; a deposit is verified by the
   * facilitator. A payment-identifier works as with `exact`: the same voucher presented again
   * under its id gets the answer it bought, free. When that answer was lost (the service died
   * after recording the voucher) while the channel record shows the voucher paid for this call
   * under this id, the call is answered again, charged nothing more (LostAnswers).
   */
  async open(presented: PresentedPayment, context: SaleContext): Promise<OpenSale> {
    const accepted = acceptBatchPayment(presented.payload, presented.requirement);
    const fingerprint = `${accepted.channelId.toLowerCase()}:${accepted.maxClaimableAmount}`;
    const paymentId = paymentIdOf(accepted.payload);
    if (paymentId !== undefined) {
      const expiresAt = Date.now() + accepted.requirement.maxTimeoutSeconds * 1000;
      // the id held by another request: its answer is on the way, or was lost with a process
      // that died holding it: 502 "retry", never a 402 inviting a second payment
      await this.identifiers.claim(
        context,
        { paymentId, fingerprint, signature: accepted.signature, expiresAt },
        () => true,
      );
    }
    try {
      if (paymentId !== undefined) {
        const call = { paymentId, resource: context.resource };
        const sold = await this.channels.soldFor(accepted, call);
        if (sold !== undefined) {
          const { requirement } = accepted;
          const lost = { channel: sold, requirement, paymentId, fingerprint, context };
          return this.lostAnswers.sale({ ...lost, version: 2 });
        }
      }
      const payment = await this.verification.verify(context, accepted.payload);
      return batchSale(
        { accepted, payment, fingerprint, paymentId, context, version: 2 },
        this.settlement,
      );
    } catch (error) {
      await this.identifiers.release(paymentId);
      throw asPaymentError(error, this.logger);
    }
  }
}

/** One voucher (or deposit) between its verification and its recording. */
export type BatchSale = SchemeSale<BatchPaymentInProgress>;

/** The sale of a verified voucher or deposit, recorded by BatchSettlement. */
export function batchSale(
  inProgress: BatchPaymentInProgress,
  settlement: BatchSettlement,
): BatchSale {
  const { requirement, payer } = inProgress.accepted;
  return new SchemeSale(inProgress, requirement, payer, settlement);
}
