import { SetMetadata } from '@nestjs/common';

export const SKIP_RATE_LIMIT = Symbol('SkipRateLimit');

/**
 * Exempts a controller or handler from RateLimitGuard: probes (liveness, readiness) must answer
 * whatever a client address has spent and without waiting for the shared count.
 */
export const SkipRateLimit = (): ClassDecorator & MethodDecorator =>
  SetMetadata(SKIP_RATE_LIMIT, true);

export const LIMITED_AS_PAID = Symbol('LimitedAsPaid');

/**
 * Counts a handler that takes a payment without selling an answer of its own (a stream's
 * top-up) in the paid routes' bucket: what raises nothing counts as a request that bought
 * nothing, and a payment it takes is given back (RateLimiter.saleOpened).
 */
export const LimitedAsPaid = (): MethodDecorator => SetMetadata(LIMITED_AS_PAID, true);
