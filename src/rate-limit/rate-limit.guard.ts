import {
  Inject,
  Injectable,
  Logger,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { RATE_LIMIT_SETTINGS, type RateLimitSettings } from './rate-limit.settings.js';
import { SKIP_RATE_LIMIT } from './skip-rate-limit.decorator.js';
import { PAID_PRICE } from '../payments/paid-price.js';
import { presentedPaymentHeader } from '../payments/x402-wire.js';
import { remoteText } from '../common/remote-text.js';

export const RATE_LIMIT_STORAGE = Symbol('RateLimitStorage');

/** The rate limit's verdict on one request: admitted, or the 429 to answer. */
export type RateLimitVerdict = ApiError | undefined;

/**
 * Per client address (the connection's, or the proxy's X-Forwarded-For with TRUST_PROXY):
 * at most RATE_LIMIT_FREE requests to free routes and RATE_LIMIT_UNPAID unpaid requests (the
 * 402s) to paid routes per RATE_LIMIT_WINDOW_MS, then 429 with Retry-After. A request that
 * carries a payment is not counted (it may be settling money) unless its payment is refused:
 * RATE_LIMIT_UNPAID refused payments per window, then that address's payments get a 429 too
 * (each refusal cost a verification: junk payments must not buy unlimited facilitator calls or
 * chain reads). The counts live in Redis with
 * REDIS_URL, so every instance counts together; if Redis cannot be reached the limit is not
 * applied (free routes keep working).
 */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger(RateLimitGuard.name);
  /** Addresses over the refused-payment limit, until when (this instance's view of the count). */
  private readonly blockedUntil = new Map<string, number>();

  constructor(
    @Inject(RATE_LIMIT_STORAGE) private readonly storage: ThrottlerStorage,
    @Inject(RATE_LIMIT_SETTINGS.token) private readonly limits: RateLimitSettings,
  ) {}

  /** Whether `paid` or free requests are limited at all (0 turns a limit off). */
  limited(paid: boolean): boolean {
    return (paid ? this.limits.unpaid : this.limits.free) !== 0;
  }

  /**
   * The verdict on `request`, counted. A request with a payment is not counted now: its `reply`
   * is watched, and a refused payment counts.
   */
  verdict(request: FastifyRequest, paid: boolean, reply: FastifyReply): Promise<RateLimitVerdict> {
    if (paid && presentedPaymentHeader((name) => single(request.headers[name])) !== undefined) {
      return Promise.resolve(this.paymentVerdict(request, reply));
    }
    return this.count(request, paid);
  }

  private paymentVerdict(request: FastifyRequest, reply: FastifyReply): RateLimitVerdict {
    const limit = this.limits.unpaid;
    if (limit === 0) return undefined;
    const until = this.blockedUntil.get(request.ip);
    if (until !== undefined && until <= Date.now()) this.blockedUntil.delete(request.ip);
    else if (until !== undefined) {
      return new ApiError(
        ErrorCode.RateLimited,
        `Too many refused payments from ${request.ip}: at most ${String(limit)} per ${String(this.limits.windowMs / 1000)} s. Fix the payment (the last 402 named why) and retry after the window.`,
        { 'retry-after': String(Math.max(1, Math.ceil((until - Date.now()) / 1000))) },
      );
    }
    // 'close' comes whether the answer went out or the client left first; a client that leaves
    // before its answer bought nothing it received, and must not escape the count by hanging up
    // (even before this guard ran, when 'close' has already been emitted)
    whenClosed(reply.raw, () => {
      if (reply.raw.writableFinished && !REFUSED.has(reply.raw.statusCode)) return;
      this.storage
        .increment(request.ip, this.limits.windowMs, limit, 0, 'refused')
        .then((record) => {
          if (record.isBlocked) {
            this.blockedUntil.set(request.ip, Date.now() + record.timeToBlockExpire * 1000);
          }
        })
        .catch((error: unknown) => {
          this.logger.warn(`refused payment not counted: ${remoteText(error)}`);
        });
    });
    return undefined;
  }

  private async count(request: FastifyRequest, paid: boolean): Promise<RateLimitVerdict> {
    const [bucket, limit] = paid ? ['unpaid', this.limits.unpaid] : ['free', this.limits.free];
    if (limit === 0) return undefined;
    let record;
    try {
      record = await this.storage.increment(request.ip, this.limits.windowMs, limit, 0, bucket);
    } catch (error) {
      this.logger.warn(`rate limit not applied: ${remoteText(error)}`);
      return undefined;
    }
    if (!record.isBlocked) return undefined;
    return new ApiError(
      ErrorCode.RateLimited,
      `Too many ${paid ? 'unpaid requests to paid routes' : 'requests'} from ${request.ip}: at most ${String(limit)} per ${String(this.limits.windowMs / 1000)} s. A request carrying a valid payment is not limited.`,
      { 'retry-after': String(record.timeToBlockExpire) },
    );
  }
}

/** RateLimiter on every Nest route: a paid route's bucket is `unpaid`, any other's `free`. */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const skipped = this.reflector.getAllAndOverride<boolean | undefined>(SKIP_RATE_LIMIT, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (skipped === true) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const paid = this.reflector.get<unknown>(PAID_PRICE, context.getHandler()) !== undefined;
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const refusal = await this.limiter.verdict(request, paid, reply);
    if (refusal !== undefined) throw refusal;
    return true;
  }
}

/** A payment answered with one of these was refused: nothing was sold. */
const REFUSED = new Set([400, 402, 409]);

/** Runs `then` once `response` is closed: at once if its client has already left. */
function whenClosed(response: ServerResponse, then: () => void): void {
  if (response.closed) then();
  else response.once('close', then);
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
