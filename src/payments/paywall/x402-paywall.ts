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
import { bazaarResourceServerExtension } from '@x402/extensions/bazaar';
import {
  PAYMENT_IDENTIFIER,
  declarePaymentIdentifierExtension,
  paymentIdentifierResourceServerExtension,
} from '@x402/extensions/payment-identifier';
import type { FastifyRequest } from 'fastify';
import { StartupError } from '../../common/startup-error.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { FACILITATOR_CLIENT, reasonOf } from '../facilitator/facilitator-client.js';
import { FacilitatorReadiness } from '../facilitator/facilitator-readiness.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../payments.settings.js';
import { bazaarDeclaration, describeRoute, type RouteDescription } from './discovery.js';
import { FastifyHttpAdapter } from './fastify-http-adapter.js';
import { PaidRouteExplorer, type PaidRoute } from './paid-routes.js';
import {
  REQUESTED_EXTENSIONS,
  declaredForPayment,
  type RequestedExtension,
} from './requested-extensions.js';
import { offerFor } from './route-offers.js';
import { SchemeRegistry } from './scheme-registry.js';
import { encodeHeaderJson, PAYMENT_REQUIRED_HEADER, toV1PaymentRequired } from './x402-wire.js';

/** A 402 ready to send: v2 PAYMENT-REQUIRED header and the v1-shaped JSON body. */
export interface PaymentChallenge {
  readonly kind: 'challenge';
  readonly headers: Readonly<Record<string, string>>;
  readonly body: ReturnType<typeof toV1PaymentRequired>;
  readonly requirements: readonly PaymentRequirements[];
  /** The v2 PaymentRequired the header encodes. */
  readonly required: PaymentRequired;
}

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
  /** The schemes v1 clients are offered (the 402 body), fixed at describe(). */
  private v1Schemes: ReadonlySet<string> = new Set();

  constructor(
    @Inject(PAYMENT_SETTINGS.token) private readonly payments: PaymentConfig,
    @Inject(FACILITATOR_CLIENT) private readonly facilitator: FacilitatorClient,
    private readonly explorer: PaidRouteExplorer,
    private readonly schemes: SchemeRegistry,
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
    const offered = this.schemes.offered();
    this.v1Schemes = this.schemes.offeredToV1();
    // the configured facilitator first; a scheme settled in this process brings its own
    const facilitators = [
      this.facilitator,
      ...offered.flatMap((plugin) => plugin.ownFacilitator?.() ?? []),
    ];
    const resourceServer = new x402ResourceServer(facilitators);
    for (const plugin of offered) {
      resourceServer.register(this.payments.network, plugin.serverScheme(this.payments.network));
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
      `Selling ${Object.keys(this.http().routes).length} routes on ${this.payments.network} ` +
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

  /** Settles a verified payment; never throws for a refusal, only when the facilitator is unreachable. */
  async settle(payment: VerifiedPayment): Promise<SettleResponse> {
    return settleResponse(await this.processSettlement(payment));
  }

  /**
   * `settle`, keeping the amount and the scheme's state in `extra` (a channel's state, which
   * the buyer's client needs for its next voucher).
   */
  async settleWithState(payment: VerifiedPayment): Promise<SettleResponse> {
    const result = await this.processSettlement(payment);
    return {
      ...settleResponse(result),
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

  /** Every paid route with its price, for review and the snapshot test. */
  routeTable(): Record<string, RouteConfig> {
    return this.http().routes as Record<string, RouteConfig>;
  }

  private routeConfig(route: PaidRoute, description: RouteDescription): RouteConfig {
    // the same price in every offered scheme, in X402_SCHEMES order
    const offers = this.schemes
      .offered()
      .map((plugin) => offerFor(route, plugin.scheme, this.payments));
    return {
      accepts: offers.length === 1 && offers[0] !== undefined ? offers[0] : offers,
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
    const body = toV1PaymentRequired(
      required,
      {
        input: { type: 'http', method: request.method, discoverable: true },
        output: description?.outputSchema ?? {},
      },
      this.v1Schemes,
    );
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
