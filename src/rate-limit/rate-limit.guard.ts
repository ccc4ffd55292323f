import {
  Inject,
  Injectable,
  Logger,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { RATE_LIMIT_SETTINGS, type RateLimitSettings } from './rate-limit.settings.js';
import { PAID_PRICE } from '../payments/paid-price.js';
import { presentedPaymentHeader } from '../payments/x402-wire.js';

export const RATE_LIMIT_STORAGE = Symbol('RateLimitStorage');

/**
 * Per client address (the connection's, or the proxy's X-Forwarded-For with TRUST_PROXY):
 * at most RATE_LIMIT_FREE requests to free routes and RATE_LIMIT_UNPAID unpaid requests (the
 * 402s) to paid routes per RATE_LIMIT_WINDOW_MS, then 429 with Retry-After. A request that
 * carries a payment is not counted (it may be settling money) unless its payment is refused:
 * RATE_LIMIT_UNPAID refused payments per window, then that address's payments get a 429 too. The counts live in Redis with
 * REDIS_URL, so every instance counts together; if Redis cannot be reached the limit is not
 * applied (free routes keep working).
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly logger = new Logger(RateLimitGuard.name);
  private readonly limits: RateLimitSettings;
  /** Addresses over the refused-payment limit, until when (this instance's view of the count). */
  private readonly blockedUntil = new Map<string, number>();

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
      this.limitRefusedPayments(request, context.switchToHttp().getResponse<FastifyReply>());
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
      `Too many ${paid ? 'unpaid requests to paid routes' : 'requests'} from ${request.ip}: at most ${String(limit)} per ${String(this.limits.windowMs / 1000)} s. A request carrying a valid payment is not limited.`,
      { 'retry-after': String(record.timeToBlockExpire) },
    );
  }

  /**
   * A request with a payment is never counted as unpaid, but refused payments are: each costs a
   * verification (a facilitator call or a chain read for a channel), and junk payments must not
   * buy unlimited work. After RATE_LIMIT_UNPAID refusals in a window, that address's payments get
   * a 429 until the window ends; a payment that is sold never counts.
   */
  private limitRefusedPayments(request: FastifyRequest, reply: FastifyReply): void {
    const limit = this.limits.unpaid;
    if (limit === 0) return;
    const wait = this.blockedUntil.get(request.ip);
    if (wait !== undefined && wait <= Date.now()) this.blockedUntil.delete(request.ip);
    else if (wait !== undefined) {
      throw new ApiError(
        ErrorCode.RateLimited,
        `Too many refused payments from ${request.ip}: at most ${String(limit)} per ${String(this.limits.windowMs / 1000)} s. Fix the payment (the last 402 named why) and retry after the window.`,
        { 'retry-after': String(Math.max(1, Math.ceil((wait - Date.now()) / 1000))) },
      );
    }
    reply.raw.once('finish', () => {
      if (!REFUSED.has(reply.raw.statusCode)) return;
      this.storage
        .increment(request.ip, this.limits.windowMs, limit, 0, 'refused')
        .then((record) => {
          if (record.isBlocked) {
            this.blockedUntil.set(request.ip, Date.now() + record.timeToBlockExpire * 1000);
          } else {
            this.blockedUntil.delete(request.ip);
          }
        })
        .catch((error: unknown) => {
          this.logger.warn(`refused payment not counted: ${String(error)}`);
        });
    });
  }
}

/** A payment answered with one of these was refused: nothing was sold. */
const REFUSED = new Set([400, 402, 409]);

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
