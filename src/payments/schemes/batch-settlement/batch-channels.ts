import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import { StartupError } from '../../../common/startup-error.js';
import type { SettleResponse } from '@x402/core/types';
import type { Channel, ChannelStorage } from '@x402/evm/batch-settlement/server';
import { privateKeyToAccount } from 'viem/accounts';
import { CHANNEL_STORAGE, ChannelStores } from '../../channels/channel-storage.js';
import {
  BATCH_SETTLEMENT_SETTINGS,
  type BatchSettlementConfig,
} from './batch-settlement.settings.js';
import { LocalChannelStorage } from '../../channels/local-channel-storage.js';
import { FACILITATORS, NetworkFacilitators } from '../../facilitator/network-facilitators.js';
import {
  PAYMENT_SETTINGS,
  type PaymentConfig,
  type PaymentNetwork,
} from '../../payments.settings.js';
import type { VerifiedPayment } from '../../paywall/x402-paywall.js';
import type { AcceptedBatchPayment } from './batch-acceptance.js';
import { BatchClaims, type ClaimRound } from './batch-claims.js';
import {
  takeBackLateCharge,
  takeBackUncertainCharge,
  type ChargedVoucher,
} from './batch-take-backs.js';
import { PaidCallStamps, soldFor, type PaidCall } from './paid-calls.js';
import { minDepositFor } from './deposit-policy.js';
import type { UsdPrice } from '../../paywall/paid-price.js';
import { reasonOf } from '../../facilitator/facilitator-client.js';
import { SellerBatchScheme } from './seller-batch-scheme.js';

/** Shutdown waits at most this long for the last claims and settlements. */
const BATCH_FLUSH_TIMEOUT_MS = 15_000;

/**
 * The seller's side of its payment channels, per network: the SDK's server scheme over that
 * network's channel store, the claim rounds that turn recorded vouchers into money on its chain,
 * and taking a price back off a channel when its call was not sold.
 */
@Injectable()
export class BatchChannels implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(BatchChannels.name);
  private readonly schemes = new Map<string, SellerBatchScheme>();
  /** Each network's claims, once the facilitator confirmed the routes. */
  private readonly claims = new Map<string, BatchClaims>();
  /** The deposit each network's offer asks for (sizeDeposits), in atomic units. */
  private readonly minDeposits = new Map<string, bigint | undefined>();
  /** Payment-identifiers written with the vouchers they came with (see PaidCallStamps). */
  readonly paidCalls = new PaidCallStamps();
  private stopped = false;

  constructor(
    @Inject(PAYMENT_SETTINGS.token) private readonly payments: PaymentConfig,
    @Inject(FACILITATORS) private readonly facilitators: NetworkFacilitators,
    /** Null when batch settlement is not offered: then nothing here is used. */
    @Inject(CHANNEL_STORAGE) private readonly stores: ChannelStores | null,
    @Inject(BATCH_SETTLEMENT_SETTINGS.token) private readonly batch: BatchSettlementConfig,
  ) {}

  /** The SDK's reservation id of a verified payment (its request context), if it holds one. */
  reservationOf(payment: VerifiedPayment): string | undefined {
    return this.scheme(payment.requirements.network).readRequestContext(payment.payload)?.pendingId;
  }

  /** The SDK's batch-settlement server scheme of a network (channel state, local voucher checks). */
  scheme(network: string): SellerBatchScheme {
    let scheme = this.schemes.get(network);
    if (scheme === undefined) {
      const { authorizerPrivateKey } = this.batch;
      scheme = new SellerBatchScheme(
        this.payments.payTo,
        {
          storage: this.channels(network),
          minDeposit: () => this.minDeposits.get(network),
          // the seller's own receiver authorizer: the same everywhere, whichever key settles
          ...(authorizerPrivateKey === undefined
            ? {}
            : { receiverAuthorizerSigner: privateKeyToAccount(authorizerPrivateKey) }),
        },
        (channelId) => this.claims.get(network)?.isParked(channelId) ?? false,
        this.paidCalls,
      );
      this.schemes.set(network, scheme);
    }
    return scheme;
  }

  /**
   * Sizes the deposit every network's batch offer asks for (`extra.minDeposit`, deposit-policy.ts)
   * from the paid routes' `prices` and X402_BATCH_MIN_DEPOSIT.
   */
  sizeDeposits(prices: readonly UsdPrice[]): void {
    for (const { network, asset } of this.payments.networks) {
      try {
        this.minDeposits.set(network, minDepositFor(this.batch.minDeposit, prices, asset.decimals));
      } catch (error) {
        throw new StartupError(
          `Cannot offer batch-settlement on ${network}: its deposit (X402_BATCH_MIN_DEPOSIT) ` +
            `is no amount of its token: ${reasonOf(error)}`,
          { cause: error },
        );
      }
    }
  }

  /**
   * Each network's store holds only that network's channels (a channel id is its config's hash
   * with the chain id). A channel of another configured network means X402_NETWORKS was
   * reordered (the first network keeps the unsuffixed store): its owed vouchers would never be
   * claimed and its buyers could sign the charged range again. A channel of no configured network
   * means the store is another deployment's, or a local chain's since reset. Start-up stops,
   * saying which.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (this.stores === null) return;
    const networks = this.payments.networks.map(({ network }) => network);
    for (const network of networks) {
      const foreign = (await this.channels(network).list()).find(
        (channel) => computeChannelId(channel.channelConfig, network) !== channel.channelId,
      );
      if (foreign === undefined) continue;
      const owner = networks.find(
        (other) =>
          other.startsWith('eip155:') &&
          computeChannelId(foreign.channelConfig, other) === foreign.channelId,
      );
      const found =
        `Cannot start: the batch-settlement channel store of ${network} holds channel ` +
        `${foreign.channelId}, which is not a channel on ${network}`;
      throw new StartupError(
        owner === undefined
          ? `${found} nor on any network X402_NETWORKS lists: the store belongs to another ` +
              'deployment or to a chain that was reset. Point X402_BATCH_DATA_DIR (or ' +
              "REDIS_URL) at this deployment's own store; a store of a throw-away test chain " +
              'can be deleted.'
          : `${found} but on ${owner}: X402_NETWORKS was reordered. The first network keeps ` +
              `the unsuffixed store (Redis prefix, X402_BATCH_DATA_DIR): put ${owner} first ` +
              'again.',
      );
    }
  }

  /**
   * Claims recorded vouchers and settles the claims to X402_PAY_TO every
   * X402_BATCH_SETTLE_INTERVAL_MS on each network, refunding channels idle for a day.
   */
  startClaims(): void {
    if (this.stopped) return;
    for (const network of this.payments.networks) {
      if (this.claims.has(network.network)) continue;
      const claims = this.newClaims(network);
      this.claims.set(network.network, claims);
      claims.start();
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    await this.flushClaims();
    for (const storage of this.stores?.all() ?? []) {
      if (storage instanceof LocalChannelStorage) await storage.close();
    }
  }

  /** A network's channel records (operators and tests); the first network's by default. */
  channels(network: string = this.payments.networks[0].network): ChannelStorage {
    if (this.stores === null) throw new Error('batch-settlement is not among X402_SCHEMES');
    return this.stores.of(network);
  }

  /**
   * The channel record, when `payment` is its latest voucher and was recorded as paying for
   * `call`: sold, whether or not its answer reached the buyer.
   */
  async soldFor(payment: AcceptedBatchPayment, call: PaidCall): Promise<Channel | undefined> {
    const channel = await this.channels(payment.requirement.network).get(payment.channelId);
    return soldFor(channel, payment, call) ? channel : undefined;
  }

  /** Claims and settles a network's channels now (tests, operators); the first network's by default. */
  claimAndSettle(network: string = this.payments.networks[0].network): Promise<ClaimRound> {
    const claims = this.claims.get(network) ?? this.newClaims(this.networkConfig(network));
    return claims.claimAndSettle();
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
    this.claims.get(settlement.network)?.claimIfOverThreshold(BigInt(charged), BigInt(claimed));
  }

  /** See takeBackLateCharge; resolves once it is done (never rejects). */
  takeBackLateCharge(
    payment: VerifiedPayment,
    voucher: ChargedVoucher,
    settling: Promise<SettleResponse>,
  ): Promise<void> {
    const { network } = payment.requirements;
    return takeBackLateCharge(
      this.channels(network),
      this.logger,
      payment,
      voucher,
      settling,
      this.claimingOn(network),
    );
  }

  /** See takeBackUncertainCharge; resolves once it is done (never rejects). */
  takeBackUncertainCharge(payment: VerifiedPayment, voucher: ChargedVoucher): Promise<void> {
    const { network } = payment.requirements;
    return takeBackUncertainCharge(
      this.channels(network),
      this.logger,
      payment,
      voucher,
      this.claimingOn(network),
    );
  }

  /** Whether claims of `network` set a channel aside (the chain refused its vouchers lately). */
  setAsideOn(network: string): (channelId: string) => boolean {
    return (channelId) => this.claims.get(network)?.isParked(channelId) ?? false;
  }

  /** Whether a claim round of `network` is running or waiting, for a take-back to wait for. */
  claimingOn(network: string): () => boolean {
    return () => this.claims.get(network)?.claiming() ?? false;
  }

  private networkConfig(network: string): PaymentNetwork {
    const config = this.payments.networks.find((candidate) => candidate.network === network);
    if (config === undefined) throw new Error(`${network} is not among X402_NETWORKS`);
    return config;
  }

  private newClaims({ network, asset }: PaymentNetwork): BatchClaims {
    const { batch } = this;
    const manager = this.scheme(network).createChannelManager(
      this.facilitators.of(network),
      network,
      asset.address,
    );
    return new BatchClaims(manager, this.channels(network), {
      intervalMs: batch.settleIntervalMs,
      threshold: batch.claimThreshold,
    });
  }

  /** The last vouchers are claimed and settled before the process goes (bounded). */
  private async flushClaims(): Promise<void> {
    const claims = [...this.claims.values()];
    this.claims.clear();
    if (claims.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const flushed = Promise.all(claims.map((round) => round.stop())).then(() => true);
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
