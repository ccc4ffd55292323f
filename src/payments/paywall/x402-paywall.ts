import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import {
  x402HTTPResourceServer,
  x402ResourceServer,
  type FacilitatorClient,
  type HTTPRequestContext,
  type HTTPResponseInstructions,
  type RouteConfig,
} from '@x402/core/server';
import type {
  PaymentPayload,
  PaymentRequired,
  PaymentRequirements,
  SettleResponse,
} from '@x402/core/types';
import type { ChannelStorage } from '@x402/evm/batch-settlement/server';
import { RedisChannelStorage } from '@x402/evm/batch-settlement/server/redis-storage';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { bazaarResourceServerExtension } from '@x402/extensions/bazaar';
import {
  PAYMENT_IDENTIFIER,
  declarePaymentIdentifierExtension,
  paymentIdentifierResourceServerExtension,
} from '@x402/extensions/payment-identifier';
import type { FastifyRequest } from 'fastify';
import { privateKeyToAccount } from 'viem/accounts';
import { ApiError, ErrorCode } from '../../common/api-error.js';
import { backoffDelay, type Backoff } from '../../common/backoff.js';
import { StartupError } from '../../common/startup-error.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { REDIS_CLIENT, type RedisClient } from '../../shared-state/redis-connection.js';
import { BATCH_SETTLEMENT } from '../schemes/batch-settlement/batch-acceptance.js';
import { BatchClaims, type ClaimRound } from '../schemes/batch-settlement/batch-claims.js';
import { LocalChannelStorage } from '../channels/local-channel-storage.js';
import { bazaarDeclaration, describeRoute, type RouteDescription } from './discovery.js';
import {
  EmbeddedFacilitatorClient,
  FACILITATOR_CLIENT,
  isFacilitatorUnreachable,
  reasonOf,
} from '../facilitator/facilitator-client.js';
import { FastifyHttpAdapter } from './fastify-http-adapter.js';
import { PaidRouteExplorer, type PaidRoute } from './paid-routes.js';
import { usdToAtomic } from './usd-amount.js';
import { encodeHeaderJson, PAYMENT_REQUIRED_HEADER, toV1PaymentRequired } from './x402-wire.js';
import { PAYMENT_SETTINGS, type PaymentConfig, type PaymentScheme } from '../payments.settings.js';
import {
  SellerBatchScheme,
  chargeRecorded,
  isReserved,
} from '../schemes/batch-settlement/seller-batch-scheme.js';
import { SellerExactScheme } from '../schemes/exact/seller-exact-scheme.js';
import {
  REQUESTED_EXTENSIONS,
  declaredForPayment,
  type RequestedExtension,
} from './requested-extensions.js';

/** A 402 ready to send: v2 PAYMENT-REQUIRED header and the v1-shaped JSON body. */
export interface PaymentChallenge {
  readonly kind: 'challenge';
  readonly headers: Readonly<Record<string, string>>;
  readonly body: ReturnType<typeof toV1PaymentRequired>;
  readonly requirements: readonly PaymentRequirements[];
  /** The v2 PaymentRequired the header encodes. */
  readonly required: PaymentRequired;
}

/** Waits before asking an unreachable facilitator again, one per failure. */
const FACILITATOR_RETRY: Backoff = { baseMs: 1_000, maxMs: 30_000 };
/** At most this many ready 402s are kept (one per route and resource URL; the URL names the symbols). */
const MAX_CACHED_CHALLENGES = 1000;

/** A payment the facilitator accepted for this request, not yet settled. */
export interface VerifiedPayment {
  readonly kind: 'verified';
  readonly payload: PaymentPayload;
  readonly requirements: PaymentRequirements;
  readonly declaredExtensions: Record<string, unknown> | undefined;
  readonly context: HTTPRequestContext;
  /** Gives a reservation back (batch settlement: the channel's pending request) when no answer is sold. */
  readonly cancel: (reason: 'handler_threw' | 'handler_failed') => Promise<void>;
}

/** Shutdown waits at most this long for the last claim and settlement. */
const BATCH_FLUSH_TIMEOUT_MS = 15_000;

/**
 * The x402 resource server for this app: the route table is built from the `@Paid` handlers
 * at start-up, checked against the facilitator at boot, and used per request to challenge,
 * verify and settle. It knows prices and money, never tickers.
 */
@Injectable()
export class X402Paywall implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(X402Paywall.name);
  private readonly payments: PaymentConfig;
  private server: x402HTTPResourceServer | undefined;
  private descriptions = new Map<string, RouteDescription>();
  /** Each route's payment requirements: fixed once configured, so built on first use only. */
  private readonly requirements = new Map<string, readonly PaymentRequirements[]>();
  /** The facilitator confirmed every paid route; until then paid routes answer 503. */
  private confirmed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retries = 0;
  private nextAttemptAt = 0;
  private destroyed = false;
  /**
   * The 402 for each route and resource URL, built once: it depends on nothing else, and
   * building and base64-encoding it costs ten times a plain answer.
   */
  private readonly challenges = new Map<string, PaymentChallenge>();
  /** The batch-settlement server scheme (channel state, local voucher checks), when offered. */
  private readonly batchScheme: SellerBatchScheme | undefined;
  /** Where the channels' state lives (Redis, or this process's data directory). */
  private readonly channelStorage: ChannelStorage | undefined;
  /** Claims and settles the recorded vouchers, once the facilitator confirmed the routes. */
  private claims: BatchClaims | undefined;

  constructor(
    @Inject(PAYMENT_SETTINGS.token) payments: PaymentConfig,
    @Inject(FACILITATOR_CLIENT) private readonly facilitator: FacilitatorClient,
    private readonly explorer: PaidRouteExplorer,
    private readonly metrics: MetricsService,
    @Inject(REDIS_CLIENT) redis: RedisClient | null,
    @Optional()
    @Inject(REQUESTED_EXTENSIONS)
    private readonly requestable: readonly RequestedExtension[] = [],
  ) {
    this.payments = payments;
    if (this.payments.schemes.includes(BATCH_SETTLEMENT)) {
      const { authorizerPrivateKey } = this.payments.batch;
      this.channelStorage = channelStorage(this.payments, redis);
      this.batchScheme = new SellerBatchScheme(
        this.payments.payTo,
        {
          storage: this.channelStorage,
          // the seller's own receiver authorizer: the same on every instance, whichever key settles
          ...(authorizerPrivateKey === undefined
            ? {}
            : { receiverAuthorizerSigner: privateKeyToAccount(authorizerPrivateKey) }),
        },
        (channelId) => this.claims?.isParked(channelId) ?? false,
      );
    }
  }

  /** Builds the route table; the OpenAPI document supplies each route's discovery schemas. */
  describe(document: OpenAPIObject): void {
    const routes: Record<string, RouteConfig> = {};
    this.descriptions = new Map();
    this.requirements.clear();
    this.challenges.clear();
    for (const route of this.explorer.explore()) {
      try {
        const description = describeRoute(document, route);
        this.descriptions.set(routeKey(route), description);
        routes[routeKey(route)] = this.routeConfig(route, description);
      } catch (error) {
        throw new StartupError(
          `Cannot sell ${route.handler} (${routeKey(route)}): ${reasonOf(error)}`,
          { cause: error },
        );
      }
    }
    const resourceServer = new x402ResourceServer(this.facilitator);
    if (this.payments.schemes.includes('exact')) {
      // with the facilitator in this process, verified with one chain call (SellerExactScheme)
      const { facilitator } = this;
      const exact =
        facilitator instanceof EmbeddedFacilitatorClient
          ? new SellerExactScheme((asset, authorization, signature) =>
              facilitator.wouldTransfer(asset, authorization, signature),
            )
          : new ExactEvmScheme();
      resourceServer.register(this.payments.network, exact);
    }
    if (this.batchScheme !== undefined) {
      resourceServer.register(this.payments.network, this.batchScheme);
    }
    resourceServer
      .registerExtension(bazaarResourceServerExtension)
      .registerExtension(paymentIdentifierResourceServerExtension);
    for (const { extension } of this.requestable) resourceServer.registerExtension(extension);
    this.server = new x402HTTPResourceServer(resourceServer, routes);
  }

  /**
   * Checks every route against the facilitator's supported kinds. A facilitator that answers
   * and does not support a route fails start-up; one that cannot be reached does not: the
   * service starts, paid routes answer 503 and the check is retried in the background.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (this.server === undefined) {
      const routes = this.explorer.explore().map((route) => route.handler);
      throw new StartupError(
        `Cannot start: the x402 paywall was never installed, so the @Paid routes ` +
          `(${routes.join(', ')}) cannot be sold; call installPaywall(app, document) after ` +
          'building the OpenAPI document (createApp does).',
      );
    }
    const unreachable = await this.confirmRoutes();
    if (unreachable === undefined) return;
    this.logger.warn(
      `The ${this.payments.facilitator.mode} x402 facilitator cannot be reached (${reasonOf(unreachable)}); ` +
        'serving anyway: paid routes answer 503 facilitator_unavailable until it confirms them. Retrying in the background.',
    );
    this.scheduleRetry();
  }

  async onModuleDestroy(): Promise<void> {
    this.destroyed = true;
    clearTimeout(this.retryTimer);
    await this.flushClaims();
    if (this.channelStorage instanceof LocalChannelStorage) await this.channelStorage.close();
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

  /** The facilitator has confirmed the paid routes: they can be sold. */
  get ready(): boolean {
    return this.confirmed;
  }

  /** Seconds until the facilitator is asked again (at least 1), for `Retry-After`. */
  retryAfterSeconds(): number {
    return Math.max(1, Math.ceil((this.nextAttemptAt - Date.now()) / 1000));
  }

  /** Undefined once confirmed; the failure when the facilitator could not be reached. */
  private async confirmRoutes(): Promise<unknown> {
    try {
      await this.http().initialize();
    } catch (error) {
      if (isFacilitatorUnreachable(error)) {
        this.metrics.facilitatorError('supported');
        return error;
      }
      throw new StartupError(
        `Cannot start: the ${this.payments.facilitator.mode} x402 facilitator could not confirm the paid routes ` +
          `(${reasonOf(error)}). Check X402_FACILITATOR, X402_NETWORK and the asset settings, ` +
          'or run everything locally with `npm start` without X402_PAY_TO.',
        { cause: error },
      );
    }
    this.confirmed = true;
    this.startClaims();
    this.logger.log(
      `Selling ${Object.keys(this.http().routes).length} routes on ${this.payments.network} ` +
        `to ${this.payments.payTo} through the ${this.payments.facilitator.mode} facilitator`,
    );
    return undefined;
  }

  private scheduleRetry(): void {
    if (this.destroyed) return;
    const delay = backoffDelay(this.retries, FACILITATOR_RETRY);
    this.retries += 1;
    this.nextAttemptAt = Date.now() + delay;
    this.retryTimer = setTimeout(() => void this.retry(), delay);
    this.retryTimer.unref();
  }

  private async retry(): Promise<void> {
    try {
      if ((await this.confirmRoutes()) === undefined) return;
    } catch (error) {
      // It answers now but refuses a route: too late to stop start-up, so say it loudly.
      this.logger.error(reasonOf(error));
    }
    this.scheduleRetry();
  }

  /** The x402 server, once the facilitator confirmed the routes; a 503 for the client before. */
  private sellingServer(): x402HTTPResourceServer {
    if (!this.confirmed) {
      throw new ApiError(
        ErrorCode.FacilitatorUnavailable,
        'The payment facilitator has not confirmed the paid routes yet; nothing was charged.',
        { 'retry-after': String(this.retryAfterSeconds()) },
      );
    }
    return this.http();
  }

  /** What this route accepts, for pairing a v1 payment with the v2 requirement it answers. */
  async requirementsFor(request: FastifyRequest): Promise<readonly PaymentRequirements[]> {
    const key = `${request.method} ${request.routeOptions.url ?? ''}`;
    let accepts = this.requirements.get(key);
    if (accepts === undefined) {
      accepts = (await this.challenge(request)).requirements;
      this.requirements.set(key, accepts);
    }
    return accepts;
  }

  /** The 402 for this request, with `error` naming why when a payment was refused. */
  async challenge(request: FastifyRequest, error?: string): Promise<PaymentChallenge> {
    const context = this.context(request, undefined);
    const key = `${request.method} ${request.routeOptions.url ?? ''} ${context.adapter.getUrl()}`;
    let unpaid = this.challenges.get(key);
    if (unpaid === undefined) {
      const result = await this.sellingServer().processHTTPRequest(context);
      if (result.type !== 'payment-error') throw new Error(`${request.url} is not a paid route`);
      unpaid = this.toChallenge(request, result.response, undefined);
      if (this.challenges.size >= MAX_CACHED_CHALLENGES) {
        const oldest = this.challenges.keys().next();
        if (oldest.done !== true) this.challenges.delete(oldest.value);
      }
      this.challenges.set(key, unpaid);
    }
    return error === undefined ? unpaid : withReason(unpaid, error);
  }

  /** Verifies a payment (already in v2 form) with the facilitator; a refusal is a challenge. */
  async verify(
    request: FastifyRequest,
    payload: PaymentPayload,
  ): Promise<VerifiedPayment | PaymentChallenge> {
    const context = this.context(request, encodeHeaderJson(payload));
    const result = await this.sellingServer().processHTTPRequest(context);
    switch (result.type) {
      case 'payment-verified': {
        const dispatcher = result.cancellationDispatcher;
        return {
          kind: 'verified',
          payload: result.paymentPayload,
          requirements: result.paymentRequirements,
          declaredExtensions: declaredForPayment(
            result.declaredExtensions,
            result.paymentPayload,
            this.requestable,
          ),
          context,
          cancel: async (reason) => {
            await dispatcher.cancel({ reason });
          },
        };
      }
      case 'payment-error':
        return this.toChallenge(request, result.response, undefined);
      case 'no-payment-required':
        throw new Error(`${request.url} is not a paid route`);
    }
  }

  /**
   * Claims recorded vouchers and settles the claims to X402_PAY_TO every
   * X402_BATCH_SETTLE_INTERVAL_MS, refunding channels idle for a day.
   */
  private startClaims(): void {
    if (this.batchScheme === undefined || this.claims !== undefined || this.destroyed) return;
    this.claims = this.newClaims(this.batchScheme);
    this.claims.start();
  }

  private newClaims(scheme: SellerBatchScheme): BatchClaims {
    const { network, asset, batch } = this.payments;
    const manager = scheme.createChannelManager(this.facilitator, network, asset.address);
    return new BatchClaims(manager, scheme.getStorage(), {
      intervalMs: batch.settleIntervalMs,
      threshold: batch.claimThreshold,
    });
  }

  /** The batch-settlement channel records (operators and tests), when the scheme is offered. */
  channels(): ChannelStorage | undefined {
    return this.channelStorage;
  }

  /** Claims and settles now (tests, operators); what the round claimed, settled and set aside. */
  async claimAndSettle(): Promise<ClaimRound | undefined> {
    if (this.batchScheme === undefined) return undefined;
    return (this.claims ?? this.newClaims(this.batchScheme)).claimAndSettle();
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

  /**
   * Settles a verified batch-settlement payment: a voucher is recorded in the channel state (no
   * chain call); a deposit goes on chain through the facilitator, then its voucher is recorded.
   * The whole response, with the channel state the buyer's client needs for its next voucher.
   */
  async settleBatch(payment: VerifiedPayment): Promise<SettleResponse> {
    const result = await this.processSettlement(payment);
    return {
      ...settleResponse(result),
      ...(result.amount === undefined ? {} : { amount: result.amount }),
      ...(result.extra === undefined ? {} : { extra: result.extra }),
    };
  }

  /**
   * A batch settlement its request stopped waiting for (the deposit was slow): that call was
   * answered with an error, so when the settlement lands after all with its charge recorded, the
   * price is taken back off the channel's charge; the deposit itself stays the buyer's in the
   * channel. A settlement that landed without recording its charge (its reservation expired and
   * another voucher was sold on that base meanwhile) has nothing to take back. If a claim took
   * the price on chain first, it cannot be taken back: that is logged with the payer to refund.
   */
  takeBackLateCharge(
    payment: VerifiedPayment,
    { channelId, maxClaimableAmount }: { channelId: string; maxClaimableAmount: string },
    settling: Promise<SettleResponse>,
  ): void {
    const storage = this.batchScheme?.getStorage();
    if (storage === undefined) return;
    const price = BigInt(payment.requirements.amount);
    void settling
      .then(async (settlement) => {
        if (!settlement.success) return;
        if (!chargeRecorded(settlement, maxClaimableAmount)) {
          this.logger.warn(
            `batch settlement: ${channelId} settled after its request gave up, without its charge recorded; nothing to take back`,
          );
          return;
        }
        const status = await takeBackPrice(storage, channelId, price);
        if (status === 'updated') {
          this.logger.warn(
            `batch settlement: ${channelId} settled after its request gave up; its price was taken back off the channel's charge`,
          );
        } else if (status === 'busy') {
          this.logger.error(
            `batch settlement: ${channelId} settled after its request gave up and stayed busy; refund ${price} to ${settlement.payer ?? 'the payer'}`,
          );
        } else {
          this.logger.error(
            `batch settlement: ${channelId} settled after its request gave up and its price was already claimed; refund ${price} to ${settlement.payer ?? 'the payer'}`,
          );
        }
      })
      .catch((error: unknown) => {
        this.logger.error(
          `batch settlement: could not take back the late charge on ${channelId}: ${reasonOf(error)}`,
        );
      });
  }

  /**
   * A voucher whose recording failed in a way that may have recorded it (the store applied the
   * write and lost the answer): its call was answered 502, so if the channel's record is this
   * voucher, its price comes off again. Retried while the store does not answer.
   */
  takeBackUncertainCharge(
    payment: VerifiedPayment,
    { channelId, signature }: { channelId: string; signature: string },
  ): void {
    const storage = this.batchScheme?.getStorage();
    if (storage === undefined) return;
    const price = BigInt(payment.requirements.amount);
    const attempt = async (until: number): Promise<void> => {
      try {
        const record = await storage.get(channelId);
        if (record?.signature.toLowerCase() !== signature.toLowerCase()) return;
        const status = await takeBackPrice(storage, channelId, price);
        if (status !== 'updated') {
          this.logger.error(
            `batch settlement: ${channelId} may have been charged for a call answered 502 (${status}); refund ${price} to its payer`,
          );
        }
      } catch (error) {
        if (Date.now() > until) {
          this.logger.error(
            `batch settlement: could not check ${channelId} for a charge answered 502 (${reasonOf(error)}); refund ${price} to its payer if it was recorded`,
          );
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, TAKE_BACK_RETRY_MS * 4));
        await attempt(until);
      }
    };
    void attempt(Date.now() + TAKE_BACK_WAIT_MS);
  }

  /** Settles a verified payment; never throws for a refusal, only when the facilitator is unreachable. */
  async settle(payment: VerifiedPayment): Promise<SettleResponse> {
    return settleResponse(await this.processSettlement(payment));
  }

  private processSettlement(
    payment: VerifiedPayment,
  ): ReturnType<x402HTTPResourceServer['processSettlement']> {
    return this.http().processSettlement(
      payment.payload,
      payment.requirements,
      payment.declaredExtensions,
      { request: payment.context },
    );
  }

  /** Every paid route with its price, for review and the snapshot test. */
  routeTable(): Record<string, RouteConfig> {
    return this.http().routes as Record<string, RouteConfig>;
  }

  private routeConfig(route: PaidRoute, description: RouteDescription): RouteConfig {
    const { asset } = this.payments;
    // the same price in every offered scheme, in X402_SCHEMES order
    const offer = (scheme: PaymentScheme) => ({
      scheme,
      network: this.payments.network,
      payTo: this.payments.payTo,
      price: {
        amount: usdToAtomic(route.price, asset.decimals),
        asset: asset.address,
        extra: { name: asset.name, version: asset.version },
      },
      maxTimeoutSeconds: this.payments.maxTimeoutSeconds,
    });
    const offers = this.payments.schemes.map(offer);
    return {
      accepts: offers.length === 1 ? offer(this.payments.schemes[0] ?? 'exact') : offers,
      // the OpenAPI summary, which names the price (documentPaidOperations)
      description: description.summary,
      mimeType: 'application/json',
      extensions: {
        ...bazaarDeclaration(description),
        [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false),
      },
    };
  }

  private toChallenge(
    request: FastifyRequest,
    response: HTTPResponseInstructions,
    error: string | undefined,
  ): PaymentChallenge {
    const encoded = response.headers[PAYMENT_REQUIRED_HEADER];
    if (encoded === undefined)
      throw new Error('x402 server answered a payment error without PAYMENT-REQUIRED');
    const decoded = decodePaymentRequiredHeader(encoded);
    const required = error === undefined ? decoded : { ...decoded, error };
    const description = this.descriptions.get(
      `${request.method} ${request.routeOptions.url ?? ''}`,
    );
    const body = toV1PaymentRequired(required, {
      input: { type: 'http', method: request.method, discoverable: true },
      output: description?.outputSchema ?? {},
    });
    const headers = { ...response.headers };
    delete headers['Content-Type'];
    if (error !== undefined) {
      headers[PAYMENT_REQUIRED_HEADER] = encodeHeaderJson(required);
    }
    return { kind: 'challenge', headers, body, requirements: required.accepts, required };
  }

  private context(
    request: FastifyRequest,
    paymentSignature: string | undefined,
  ): HTTPRequestContext {
    const adapter = new FastifyHttpAdapter(request, this.payments.publicUrl, paymentSignature);
    return {
      adapter,
      path: adapter.getPath(),
      method: request.method,
      paymentHeader: paymentSignature,
    };
  }

  private http(): x402HTTPResourceServer {
    if (this.server === undefined)
      throw new Error('X402Paywall.describe() must run before the app starts');
    return this.server;
  }
}

/** The same 402 with the reason a payment was refused, in the header and the body. */
function withReason(challenge: PaymentChallenge, error: string): PaymentChallenge {
  const required = { ...challenge.required, error };
  return {
    ...challenge,
    required,
    headers: {
      ...challenge.headers,
      [PAYMENT_REQUIRED_HEADER]: encodeHeaderJson(required),
    },
    body: { ...challenge.body, error },
  };
}

/**
 * Where channel state lives: Redis with REDIS_URL (atomic per channel across instances), else
 * one JSON file per channel under X402_BATCH_DATA_DIR, owned by this process. Never only in
 * memory: a lost voucher is lost revenue.
 */
function channelStorage(payments: PaymentConfig, redis: RedisClient | null): ChannelStorage {
  if (redis !== null) {
    return new RedisChannelStorage({
      client: redis,
      keyPrefix: 'x402-price-api:batch-settlement',
    });
  }
  try {
    return new LocalChannelStorage(payments.batch.dataDir);
  } catch (error) {
    throw new StartupError(
      `Cannot start: the batch-settlement channels in X402_BATCH_DATA_DIR (${payments.batch.dataDir}) ` +
        `cannot be used: ${reasonOf(error)}`,
      { cause: error },
    );
  }
}

function routeKey(route: PaidRoute): string {
  return `${route.method} ${route.path}`;
}

/** The settlement as the receipt header carries it: the SDK's answer without its internals. */
function settleResponse(
  result: Awaited<ReturnType<x402HTTPResourceServer['processSettlement']>>,
): SettleResponse {
  return {
    success: result.success,
    transaction: result.transaction,
    network: result.network,
    ...(result.payer === undefined ? {} : { payer: result.payer }),
    ...(result.errorReason === undefined ? {} : { errorReason: result.errorReason }),
    // what the buyer asked extensions for, such as an offer-receipt receipt
    ...(result.extensions === undefined ? {} : { extensions: result.extensions }),
  };
}

/** How long a late charge waits for a channel's reservation to end before giving up. */
const TAKE_BACK_WAIT_MS = 120_000;
const TAKE_BACK_RETRY_MS = 250;

/**
 * Takes `price` off a channel's charged total once no other request holds a reservation on it:
 * a voucher in flight adds its price to the total it finds, and taking ours off under it would
 * leave that voucher's own charge short of what it signed (and its call answered 502 while
 * charged). Not below the claimed total: a claimed price cannot be taken back.
 */
export async function takeBackPrice(
  storage: ChannelStorage,
  channelId: string,
  price: bigint,
): Promise<'updated' | 'claimed' | 'busy'> {
  for (const until = Date.now() + TAKE_BACK_WAIT_MS; ;) {
    const seen = { busy: false };
    const { status } = await storage.updateChannel(channelId, (current) => {
      // decided afresh on every run: a store may run this again when its write races another
      seen.busy = current !== undefined && isReserved(current);
      if (current === undefined || seen.busy) return current;
      const charged = BigInt(current.chargedCumulativeAmount) - price;
      if (charged < BigInt(current.totalClaimed)) return current;
      // an expired reservation still in the record could commit on the lowered total: void it
      return {
        ...current,
        chargedCumulativeAmount: charged.toString(),
        pendingRequest: undefined,
      };
    });
    if (!seen.busy) return status === 'updated' ? 'updated' : 'claimed';
    if (Date.now() > until) return 'busy';
    await new Promise((resolve) => setTimeout(resolve, TAKE_BACK_RETRY_MS));
  }
}
