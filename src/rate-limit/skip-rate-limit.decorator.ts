import { SetMetadata } from '@nestjs/common';

export const SKIP_RATE_LIMIT = Symbol('SkipRateLimit');

/**
 * Exempts a controller or handler from RateLimitGuard: probes (liveness, readiness) must answer
 * whatever a client address has spent and without waiting for the shared count.
 */
export const SkipRateLimit = (): ClassDecorator & MethodDecorator =>
  SetMetadata(SKIP_RATE_LIMIT, true);
