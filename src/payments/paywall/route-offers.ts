import type { PaymentOption, RouteConfig } from '@x402/core/http';
import {
  PAYMENT_IDENTIFIER,
  declarePaymentIdentifierExtension,
} from '@x402/extensions/payment-identifier';
import { bazaarDeclaration, type RouteDescription } from './discovery.js';
import type { PaymentRequirements } from '@x402/core/types';
import type { SoldNetwork } from '../networks/sold-networks.js';
import type { PaidRoute } from './paid-routes.js';
import { usdToAtomic } from './usd-amount.js';

/**
 * What a paid route offers in one scheme on one network: the route's USD price in the network's
 * token, to the network's pay-to. Every scheme and network offers the same price; the 402 and the
 * OpenAPI examples are built from these.
 */
export function offerFor(
  route: PaidRoute,
  scheme: string,
  { network, payTo, asset, decimals, extra }: SoldNetwork,
  maxTimeoutSeconds: number,
): PaymentOption {
  return {
    scheme,
    network,
    payTo,
    price: {
      amount: usdToAtomic(route.price, decimals),
      asset,
      // a metered route's unit price is per unit: the buyer's client reads which from here
      extra:
        route.meteredUnit === undefined ? extra : { ...extra, stream: { unit: route.meteredUnit } },
    },
    maxTimeoutSeconds,
  };
}

/** An offer as the requirement a 402 lists (a fixed price is already in atomic units). */
export function requirementOf(offer: PaymentOption): PaymentRequirements {
  const price = offer.price as { amount: string; asset: string; extra?: Record<string, unknown> };
  return {
    scheme: offer.scheme,
    network: offer.network,
    asset: price.asset,
    amount: price.amount,
    payTo: offer.payTo as string,
    maxTimeoutSeconds: offer.maxTimeoutSeconds ?? 60,
    extra: price.extra ?? {},
  };
}

/** A route as the x402 server sells it: its offers, its summary and its discovery extensions. */
export function routeConfigFor(
  route: PaidRoute,
  description: RouteDescription,
  offers: readonly PaymentOption[],
): RouteConfig {
  const [only] = offers;
  return {
    accepts: offers.length === 1 && only !== undefined ? only : [...offers],
    // the OpenAPI summary, which names the price (documentPaidOperations)
    description: description.summary,
    mimeType: route.meteredUnit === undefined ? 'application/json' : 'text/event-stream',
    extensions: {
      ...bazaarDeclaration(description),
      [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false),
    },
  };
}
