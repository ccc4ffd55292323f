import {
  Inject,
  Injectable,
  Logger,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { RATE_LIMIT_SETTINGS, type RateLimitSettings } from './rate-limit.settings.js';
import { PAID_PRICE } from '../payments/paid-price.js';
import { presentedPaymentHeader } from '../payments/x402-wire.js';

export const RATE_LIMIT_STORAGE = Symbol('RateLimitStorage');

/**
 * Per client address (the connection's, or the proxy's X-Forwarded-For with TRUST_PROXY):
 * at most RATE_LIMIT_FREE requests to free routes and RATE_LIMIT_UNPAID unpaid requests (the
 * 402s) to paid routes per RATE_LIMIT_WINDOW_MS, then 429 with Retry-After. A request that
 * carries a payment is never limited: it may be settling money. The counts live in Redis with
 * REDIS_URL, so every instance counts together; if Redis cannot be reached the limit is not
 * applied (free routes keep working).
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly logger = new Logger(RateLimitGuard.name);
  private readonly limits: RateLimitSettings;

  constructor(
    @Inject(RATE_LIMIT_STORAGE) private readonly storage: ThrottlerStorage,
    @Inject(RATE_LIMIT_SETTINGS.token) limits: RateLimitSettings,
    private readonly reflector: Reflector,
  ) {
    this.limits = limits;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const paid = this.reflector.get<unknown>(PAID_PRICE, context.getHandler()) !== undefined;
    if (paid && presentedPaymentHeader((name) => single(request.headers[name])) !== undefined) {
      return true;
    }
    const [bucket, limit] = paid ? ['unpaid', this.limits.unpaid] : ['free', this.limits.free];
    if (limit === 0) return true;
    let record;
    try {
      record = await this.storage.increment(request.ip, this.limits.windowMs, limit, 0, bucket);
    } catch (error) {
      this.logger.warn(`rate limit not applied: ${String(error)}`);
      return true;
    }
    if (!record.isBlocked) return true;
    throw new ApiError(
      ErrorCode.RateLimited,
      `Too many ${paid ? 'unpaid requests to paid routes' : 'requests'} from ${request.ip}: at most ${String(limit)} per ${String(this.limits.windowMs / 1000)} s. A request carrying a payment is never limited.`,
      { 'retry-after': String(record.timeToBlockExpire) },
    );
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
