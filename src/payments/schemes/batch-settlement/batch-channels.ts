import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { FacilitatorClient } from '@x402/core/server';
import type { SettleResponse } from '@x402/core/types';
import type { ChannelStorage } from '@x402/evm/batch-settlement/server';
import { privateKeyToAccount } from 'viem/accounts';
import { CHANNEL_STORAGE } from '../../channels/channel-storage.js';
import { LocalChannelStorage } from '../../channels/local-channel-storage.js';
import { FACILITATOR_CLIENT } from '../../facilitator/facilitator-client.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../../payments.settings.js';
import type { VerifiedPayment } from '../../paywall/x402-paywall.js';
import { BatchClaims, type ClaimRound } from './batch-claims.js';
import { takeBackLateCharge, takeBackUncertainCharge } from './batch-take-backs.js';
import { SellerBatchScheme } from './seller-batch-scheme.js';

/** Shutdown waits at most this long for the last claim and settlement. */
const BATCH_FLUSH_TIMEOUT_MS = 15_000;

/**
 * The seller's side of its payment channels: the SDK's server scheme over the channel storage,
 * the claim rounds that turn recorded vouchers into money on chain, and taking a price back off
 * a channel when its call was not sold.
 */
@Injectable()
export class BatchChannels implements OnModuleDestroy {
  private readonly logger = new Logger(BatchChannels.name);
  private sdkScheme: SellerBatchScheme | undefined;
  /** Claims and settles the recorded vouchers, once the facilitator confirmed the routes. */
  private claims: BatchClaims | undefined;
  private stopped = false;

  constructor(
    @Inject(PAYMENT_SETTINGS.token) private readonly payments: PaymentConfig,
    @Inject(FACILITATOR_CLIENT) private readonly facilitator: FacilitatorClient,
    /** Null when batch settlement is not offered: then nothing here is used. */
    @Inject(CHANNEL_STORAGE) private readonly storage: ChannelStorage | null,
  ) {}

  /** The SDK's batch-settlement server scheme (channel state, local voucher checks). */
  get scheme(): SellerBatchScheme {
    if (this.sdkScheme !== undefined) return this.sdkScheme;
    const { authorizerPrivateKey } = this.payments.batch;
    this.sdkScheme = new SellerBatchScheme(
      this.payments.payTo,
      {
        storage: this.channels(),
        // the seller's own receiver authorizer: the same on every instance, whichever key settles
        ...(authorizerPrivateKey === undefined
          ? {}
          : { receiverAuthorizerSigner: privateKeyToAccount(authorizerPrivateKey) }),
      },
      (channelId) => this.claims?.isParked(channelId) ?? false,
    );
    return this.sdkScheme;
  }

  /**
   * Claims recorded vouchers and settles the claims to X402_PAY_TO every
   * X402_BATCH_SETTLE_INTERVAL_MS, refunding channels idle for a day.
   */
  startClaims(): void {
    if (this.claims !== undefined || this.stopped) return;
    this.claims = this.newClaims();
    this.claims.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    await this.flushClaims();
    if (this.storage instanceof LocalChannelStorage) await this.storage.close();
  }

  /** The channel records (operators and tests). */
  channels(): ChannelStorage {
    if (this.storage === null) throw new Error('batch-settlement is not among X402_SCHEMES');
    return this.storage;
  }

  /** Claims and settles now (tests, operators); what the round claimed, settled and set aside. */
  claimAndSettle(): Promise<ClaimRound> {
    return (this.claims ?? this.newClaims()).claimAndSettle();
  }

  /**
   * After a voucher was recorded: when the channel's unclaimed amount reached
   * X402_BATCH_CLAIM_THRESHOLD, claim and settle in the background instead of waiting.
   */
  claimIfOverThreshold(settlement: SettleResponse): void {
    const state = (settlement.extra as { channelState?: Record<string, unknown> } | undefined)
      ?.channelState;
    const charged = state?.['chargedCumulativeAmount'];
    const claimed = state?.['totalClaimed'];
    if (typeof charged !== 'string' || typeof claimed !== 'string') return;
    this.claims?.claimIfOverThreshold(BigInt(charged), BigInt(claimed));
  }

  /** See takeBackLateCharge. */
  takeBackLateCharge(
    payment: VerifiedPayment,
    voucher: { channelId: string; maxClaimableAmount: string },
    settling: Promise<SettleResponse>,
  ): void {
    takeBackLateCharge(this.channels(), this.logger, payment, voucher, settling);
  }

  /** See takeBackUncertainCharge. */
  takeBackUncertainCharge(
    payment: VerifiedPayment,
    voucher: { channelId: string; signature: string },
  ): void {
    takeBackUncertainCharge(this.channels(), this.logger, payment, voucher);
  }

  private newClaims(): BatchClaims {
    const { network, asset, batch } = this.payments;
    const manager = this.scheme.createChannelManager(this.facilitator, network, asset.address);
    return new BatchClaims(manager, this.channels(), {
      intervalMs: batch.settleIntervalMs,
      threshold: batch.claimThreshold,
    });
  }

  /** The last vouchers are claimed and settled before the process goes (bounded). */
  private async flushClaims(): Promise<void> {
    const claims = this.claims;
    if (claims === undefined) return;
    this.claims = undefined;
    let timer: NodeJS.Timeout | undefined;
    const flushed = claims.stop().then(() => true);
    const gaveUp = new Promise<false>((resolve) => {
      timer = setTimeout(() => {
        resolve(false);
      }, BATCH_FLUSH_TIMEOUT_MS);
    });
    if (!(await Promise.race([flushed, gaveUp]))) {
      this.logger.error(
        'batch settlement: the final claim did not finish in time; the vouchers stay recorded and are claimed at the next start',
      );
    }
    clearTimeout(timer);
  }
}
