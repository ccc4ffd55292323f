import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { PaymentOption } from '@x402/core/http';
import {
  x402HTTPResourceServer,
  x402ResourceServer,
  type HTTPRequestContext,
  type RouteConfig,
} from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { bazaarResourceServerExtension } from '@x402/extensions/bazaar';
import { paymentIdentifierResourceServerExtension } from '@x402/extensions/payment-identifier';
import type { FastifyRequest } from 'fastify';
import { StartupError } from '../../common/startup-error.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { reasonOf } from '../facilitator/facilitator-client.js';
import { FACILITATORS, NetworkFacilitators } from '../facilitator/network-facilitators.js';
import { FacilitatorReadiness } from '../facilitator/facilitator-readiness.js';
import { NetworkStates } from '../networks/network-states.js';
import { soldNetworks } from '../networks/sold-networks.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../payments.settings.js';
import { describeRoute, type RouteDescription } from './discovery.js';
import { FastifyHttpAdapter } from './fastify-http-adapter.js';
import { PaidRouteExplorer, type PaidRoute } from './paid-routes.js';
import {
  REQUESTED_EXTENSIONS,
  declaredForPayment,
  type RequestedExtension,
} from './requested-extensions.js';
import { offerFor, routeConfigFor } from './route-offers.js';
import { SchemeRegistry } from './scheme-registry.js';
import { challengeFrom, onNetworks, withReason, type PaymentChallenge } from './challenges.js';
import { encodeHeaderJson, receiptFields } from './x402-wire.js';

/** At most this many ready 402s are kept (one per route and resource URL; the URL names the symbols). */
const MAX_CACHED_CHALLENGES = 1000;

/** A payment the facilitator accepted for this request, not yet settled. */
export interface VerifiedPayment {
  readonly kind: 'verified';
  readonly payload: PaymentPayload;
  readonly requirements: PaymentRequirements;
  readonly declaredExtensions: Record<string, unknown> | undefined;
  readonly context: HTTPRequestContext;
  /** Gives a reservation back (a scheme's own, such as a channel's pending request) when no answer is sold. */
  readonly cancel: (reason: 'handler_threw' | 'handler_failed') => Promise<void>;
}

/**
 * The x402 resource server for this app: the route table is built from the `@Paid` handlers
 * at start-up with an offer per registered scheme, checked against the facilitator at boot, and
 * used per request to challenge, verify and settle. It knows prices and money, never tickers,
 * and no scheme by name.
 */
@Injectable()
export class X402Paywall implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(X402Paywall.name);
  private server: x402HTTPResourceServer | undefined;
  private descriptions = new Map<string, RouteDescription>();
  /** Each route's payment requirements: fixed once configured, so built on first use only. */
  private readonly requirements = new Map<string, readonly PaymentRequirements[]>();
  /**
   * The 402 for each route and resource URL, built once: it depends on nothing else, and
   * building and base64-encoding it costs ten times a plain answer.
   */
  private readonly challenges = new Map<string, PaymentChallenge>();
  /** Paid routes are sold once the facilitator confirmed them; 503 until then. */
  private readonly readiness: FacilitatorReadiness;
  /** Whether v1 clients are offered a scheme on a network (the 402 body). */
  private readonly offeredToV1 = (scheme: string, network: string): boolean =>
    this.schemes.offersToV1(scheme, network);

  constructor(
    @Inject(PAYMENT_SETTINGS.token) private readonly payments: PaymentConfig,
    @Inject(FACILITATORS) private readonly facilitators: NetworkFacilitators,
    private readonly explorer: PaidRouteExplorer,
    private readonly schemes: SchemeRegistry,
    private readonly networks: NetworkStates,
    metrics: MetricsService,
    @Optional()
    @Inject(REQUESTED_EXTENSIONS)
    private readonly requestable: readonly RequestedExtension[] = [],
  ) {
    this.readiness = new FacilitatorReadiness(
      () => this.http().initialize(),
      () => {
        this.startSelling();
      },
      payments.facilitator.mode,
      metrics,
    );
  }

  /** Builds the route table; the OpenAPI document supplies each route's discovery schemas. */
  describe(document: OpenAPIObject): void {
    const routes: Record<string, RouteConfig> = {};
    this.descriptions = new Map();
    this.requirements.clear();
    this.challenges.clear();
    const paid = this.explorer.explore();
    for (const plugin of this.schemes.offered()) plugin.sells?.(paid);
    for (const route of paid) {
      try {
        const description = describeRoute(document, route);
        const offers = this.offersFor(route);
        // a route sold per unit with no scheme that can meter is not sold (MeteredIntake: 503)
        if (offers.length === 0 && route.meteredUnit !== undefined) continue;
        this.descriptions.set(routeKey(route), description);
        routes[routeKey(route)] = routeConfigFor(route, description, offers);
      } catch (error) {
        throw new StartupError(
          `Cannot sell ${route.handler} (${routeKey(route)}): ${reasonOf(error)}`,
          { cause: error },
        );
      }
    }
    const offered = this.schemes.offered();
    // each network's facilitator first; a scheme settled in this process brings its own
    const facilitators = [
      ...this.facilitators.all(),
      ...offered.flatMap((plugin) => plugin.ownFacilitator?.() ?? []),
    ];
    const resourceServer = new x402ResourceServer(facilitators);
    for (const { network } of soldNetworks(this.payments)) {
      for (const plugin of this.schemes.servingOn(network)) {
        resourceServer.register(network, plugin.serverScheme(network));
      }
    }
    resourceServer
      .registerExtension(bazaarResourceServerExtension)
      .registerExtension(paymentIdentifierResourceServerExtension);
    for (const { extension } of this.requestable) resourceServer.registerExtension(extension);
    this.server = new x402HTTPResourceServer(resourceServer, routes);
  }

  /**
   * Checks every route against the facilitator's supported kinds (see FacilitatorReadiness):
   * one that refuses a route fails start-up, one that cannot be reached is retried.
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
    await this.readiness.start();
  }

  onModuleDestroy(): void {
    this.readiness.stop();
  }

  /** The facilitator has confirmed the paid routes: they can be sold. */
  get ready(): boolean {
    return this.readiness.ready;
  }

  /** Seconds until the facilitator is asked again (at least 1), for `Retry-After`. */
  retryAfterSeconds(): number {
    return this.readiness.retryAfterSeconds();
  }

  private startSelling(): void {
    for (const plugin of this.schemes.offered()) plugin.startSelling?.();
    this.logger.log(
      `Selling ${Object.keys(this.http().routes).length} routes on ` +
        `${soldNetworks(this.payments)
          .map(({ network }) => network)
          .join(', ')} ` +
        `(${this.payments.schemes.join(', ')}) to ${this.payments.payTo} through the ` +
        `${this.payments.facilitator.mode} facilitator`,
    );
  }

  /** The x402 server, once the facilitator confirmed the routes; a 503 for the client before. */
  private sellingServer(): x402HTTPResourceServer {
    this.readiness.assertReady();
    return this.http();
  }

  /** What this route accepts, for pairing a v1 payment with the v2 requirement it answers. */
  async requirementsFor(request: FastifyRequest): Promise<readonly PaymentRequirements[]> {
    // every network's, also one left out of the 402 while its chain is down: a payment made on it
    // (a retry of one whose outcome is unknown, say) must reach its scheme's ledger and
    // payment-identifier checks, never a 402 inviting a second payment; a new one then fails
    // its verification with the chain (503, nothing charged)
    const key = `${request.method} ${request.routeOptions.url ?? ''}`;
    let accepts = this.requirements.get(key);
    if (accepts === undefined) {
      accepts = (await this.everyNetworksChallenge(request)).requirements;
      this.requirements.set(key, accepts);
    }
    return accepts;
  }

  /**
   * The 402 for this request, with `error` naming why when a payment was refused; a network whose
   * chain cannot be reached now is left out while another is offered (NetworkStates).
   */
  async challenge(request: FastifyRequest, error?: string): Promise<PaymentChallenge> {
    const unpaid = onNetworks(await this.everyNetworksChallenge(request), this.networks.offered());
    return error === undefined ? unpaid : withReason(unpaid, error);
  }

  /** The 402 offering every configured network, built once per route and resource URL. */
  private async everyNetworksChallenge(request: FastifyRequest): Promise<PaymentChallenge> {
    const context = this.context(request, undefined);
    const key = `${request.method} ${request.routeOptions.url ?? ''} ${context.adapter.getUrl()}`;
    let unpaid = this.challenges.get(key);
    if (unpaid === undefined) {
      const result = await this.sellingServer().processHTTPRequest(context);
      if (result.type !== 'payment-error') throw new Error(`${request.url} is not a paid route`);
      unpaid = challengeFrom(result.response, {
        method: request.method,
        outputSchema: this.descriptions.get(routeKeyOf(request))?.outputSchema ?? {},
        offeredToV1: this.offeredToV1,
      });
      if (this.challenges.size >= MAX_CACHED_CHALLENGES) {
        const oldest = this.challenges.keys().next();
        if (oldest.done !== true) this.challenges.delete(oldest.value);
      }
      this.challenges.set(key, unpaid);
    }
    return unpaid;
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
        return challengeFrom(result.response, {
          method: request.method,
          outputSchema: this.descriptions.get(routeKeyOf(request))?.outputSchema ?? {},
          offeredToV1: this.offeredToV1,
        });
      case 'no-payment-required':
        throw new Error(`${request.url} is not a paid route`);
    }
  }

  /** Settles a verified payment; never throws for a refusal, only when the facilitator is unreachable. */
  async settle(payment: VerifiedPayment): Promise<SettleResponse> {
    return receiptFields(await this.processSettlement(payment));
  }

  /**
   * `settle`, keeping the amount and the scheme's state in `extra` (a channel's state, which
   * the buyer's client needs for its next voucher).
   */
  async settleWithState(payment: VerifiedPayment): Promise<SettleResponse> {
    const result = await this.processSettlement(payment);
    return {
      ...receiptFields(result),
      ...(result.amount === undefined ? {} : { amount: result.amount }),
      ...(result.extra === undefined ? {} : { extra: result.extra }),
    };
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

  /**
   * What a route offers: the same price on every network and in every scheme offered there,
   * X402_NETWORKS × X402_SCHEMES in that order.
   */
  private offersFor(route: PaidRoute): PaymentOption[] {
    return soldNetworks(this.payments).flatMap((sold) =>
      this.schemes
        .servingOn(sold.network)
        // a route sold per unit is offered only in the schemes that can meter
        .filter((plugin) => route.meteredUnit === undefined || plugin.metering !== undefined)
        .map((plugin) => offerFor(route, plugin.scheme, sold, this.payments.maxTimeoutSeconds)),
    );
  }

  /** Every paid route with its price, for review and the snapshot test. */
  routeTable(): Record<string, RouteConfig> {
    return this.http().routes as Record<string, RouteConfig>;
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

function routeKey(route: PaidRoute): string {
  return `${route.method} ${route.path}`;
}

/** The same key for the route a request matched. */
function routeKeyOf(request: FastifyRequest): string {
  return `${request.method} ${request.routeOptions.url ?? ''}`;
}
