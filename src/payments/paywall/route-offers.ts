import type { PaymentOption } from '@x402/core/http';
import type { PaymentRequirements } from '@x402/core/types';
import type { PaymentConfig } from '../payments.settings.js';
import type { PaidRoute } from './paid-routes.js';
import { usdToAtomic } from './usd-amount.js';

/**
 * What a paid route offers in one scheme: the route's USD price in the configured token, to
 * X402_PAY_TO on the configured network. Every scheme offers the same price; the 402 and the
 * OpenAPI examples are built from these.
 */
export function offerFor(route: PaidRoute, scheme: string, payments: PaymentConfig): PaymentOption {
  const { asset } = payments;
  return {
    scheme,
    network: payments.network,
    payTo: payments.payTo,
    price: {
      amount: usdToAtomic(route.price, asset.decimals),
      asset: asset.address,
      extra: { name: asset.name, version: asset.version },
    },
    maxTimeoutSeconds: payments.maxTimeoutSeconds,
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
