import {
  Inject,
  Injectable,
  Logger,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../common/api-error.js';
import type { RateLimitRecord, RateLimitStorage } from './rate-limit-storage.js';
import { RATE_LIMIT_SETTINGS, type RateLimitSettings } from './rate-limit.settings.js';
import { LIMITED_AS_PAID, SKIP_RATE_LIMIT } from './skip-rate-limit.decorator.js';
import { PAID_PRICE, type RequestWithPayment, presentedPaymentHeader } from '../payments/index.js';
import { remoteText } from '../common/remote-text.js';

export const RATE_LIMIT_STORAGE = Symbol('RateLimitStorage');

/** Payments counted on arrival: when, and whether the payment guard has opened a sale for them. */
/**
 * A payment counted on arrival: when, whether its sale opened (its count then taken back), and
 * whether its connection already closed (a sale opened after that takes nothing back).
 */
interface CountedPayment {
  readonly countedAt: number;
  verified: boolean;
  closed: boolean;
  /** Taken by a metered route (a stream's voucher, a top-up): a sale, whatever the answer. */
  bought: boolean;
}

const countedPayments = new WeakMap<FastifyRequest, CountedPayment>();

/** Past this many addresses remembered as over the limit, the lapsed ones are dropped first. */
const PRUNE_BLOCKED_AT = 10_000;

/** The rate limit's verdict on one request: admitted, or the 429 to answer. */
export type RateLimitVerdict = ApiError | undefined;

/**
 * Per client address (the connection's, or the proxy's X-Forwarded-For with TRUST_PROXY):
 * at most RATE_LIMIT_FREE requests to free routes, and RATE_LIMIT_UNPAID requests to paid routes
 * that bought nothing, per RATE_LIMIT_WINDOW_MS; then 429 with Retry-After. Every request counts
 * on arrival, before the route's resolver: a request carrying a payment is refused once the
 * address is already over the limit; once the payment is verified its count is taken back
 * (the payment guard calls `x402SaleOpened`), and counted again if it sells nothing; a sale gives one 402 of the
 * window back (never below zero, never credit ahead): a client that pays each 402 it gets is
 * never limited, however fast it buys. Over the limit,
 * everything the address sends to paid routes, payments included, gets the 429: a payment is
 * refused before it costs a decode, a verification or a chain read. The counts live in Redis with
 * REDIS_URL, so every instance counts together; if Redis cannot be reached the limit is not
 * applied (free routes keep working).
 */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger(RateLimitGuard.name);
  /** Addresses over the paid-route limit, until when (this instance's view of the count). */
  private readonly blockedUntil = new Map<string, number>();

  constructor(
    @Inject(RATE_LIMIT_STORAGE) private readonly storage: RateLimitStorage,
    @Inject(RATE_LIMIT_SETTINGS.token) private readonly limits: RateLimitSettings,
  ) {}

  /** Whether `paid` or free requests are limited at all (0 turns a limit off). */
  limited(paid: boolean): boolean {
    return (paid ? this.limits.unpaid : this.limits.free) !== 0;
  }

  /**
   * The verdict on `request`, counted now. A request carrying a payment is refused only once the
   * address is already over the limit (the payment for the last 402 allowed still gets through),
   * and its `reply` is watched: a sale takes its own count back once answered.
   */
  verdict(request: FastifyRequest, paid: boolean, reply: FastifyReply): Promise<RateLimitVerdict> {
    if (!paid) return this.countFree(request);
    if (this.limits.unpaid === 0) return Promise.resolve(undefined);
    if (presentedPaymentHeader((name) => single(request.headers[name])) !== undefined) {
      return this.countPayment(request, reply);
    }
    return this.countChallenge(request);
  }

  private async countPayment(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<RateLimitVerdict> {
    const until = this.blockedUntil.get(request.ip);
    if (until !== undefined && until <= Date.now()) this.blockedUntil.delete(request.ip);
    else if (until !== undefined) {
      return this.tooMany(request.ip, Math.ceil((until - Date.now()) / 1000));
    }
    const countedAt = Date.now();
    let record;
    try {
      // counted before the route's resolver runs, so concurrent payments cannot each cost a
      // round of venue calls before any of them is counted
      record = await this.storage.countPaidRoute(
        request.ip,
        this.limits.windowMs,
        this.limits.unpaid + 1,
        false,
      );
    } catch (error) {
      this.logger.warn(`rate limit not applied: ${remoteText(error)}`);
      return undefined;
    }
    this.note(request.ip, record);
    if (record.isBlocked) return this.tooMany(request.ip, record.timeToBlockExpire);
    const counted: CountedPayment = { countedAt, verified: false, closed: false, bought: false };
    countedPayments.set(request, counted);
    // the payment guard says when the payment opened a sale: no interceptor on every route
    (request as RequestWithPayment).x402SaleOpened = () => this.saleOpened(request);
    // 'close' comes whether the answer went out or the client left first; a client that leaves
    // before its answer bought nothing it received, and must not escape the count by hanging up
    whenClosed(reply.raw, () => {
      counted.closed = true;
      this.closePayment(request, reply, counted);
    });
    return undefined;
  }

  /**
   * The payment guard opened a sale for `request` (its payment verified and claimed): its count
   * on arrival is taken back now, before the answer, so a buyer's next request never finds it
   * still counted; should the sale not complete, the request is counted again once closed.
   */
  async saleOpened(request: FastifyRequest): Promise<void> {
    const counted = countedPayments.get(request);
    // a client that left while its payment was checked stays counted: nothing will be sold to it
    if (counted === undefined || counted.verified || counted.closed) return;
    counted.verified = true;
    const { ip } = request;
    const { windowMs, unpaid } = this.limits;
    try {
      const ago = Date.now() - counted.countedAt;
      this.note(ip, await this.storage.takeBackPayment(ip, windowMs, unpaid, ago));
    } catch (error) {
      this.logger.warn(`verified payment not taken back: ${remoteText(error)}`);
    }
  }

  /**
   * A payment a metered route took outside the payment guard (a stream opened on its voucher, a
   * top-up): a sale, its count taken back now and one 402 given back once its connection closes.
   */
  async meteredPaymentTaken(request: FastifyRequest): Promise<void> {
    const counted = countedPayments.get(request);
    if (counted !== undefined) counted.bought = true;
    await this.saleOpened(request);
  }

  /** A sale gives one 402 of the window back; a verified payment that sold nothing counts again. */
  private closePayment(
    request: FastifyRequest,
    reply: FastifyReply,
    payment: CountedPayment,
  ): void {
    const { verified } = payment;
    const { ip } = request;
    const { windowMs, unpaid } = this.limits;
    let counted: Promise<RateLimitRecord>;
    if (payment.bought || sold(request, reply)) {
      counted = this.storage.giveBackChallenge(ip, unpaid);
    } else if (verified) counted = this.storage.countPaidRoute(ip, windowMs, unpaid, false);
    else return;
    counted
      .then((record) => {
        this.note(ip, record);
      })
      .catch((error: unknown) => {
        this.logger.warn(`paid request not counted: ${remoteText(error)}`);
      });
  }

  private async countChallenge(request: FastifyRequest): Promise<RateLimitVerdict> {
    let record;
    try {
      record = await this.storage.countPaidRoute(
        request.ip,
        this.limits.windowMs,
        this.limits.unpaid,
        true,
      );
    } catch (error) {
      this.logger.warn(`rate limit not applied: ${remoteText(error)}`);
      return undefined;
    }
    this.note(request.ip, record);
    return record.isBlocked ? this.tooMany(request.ip, record.timeToBlockExpire) : undefined;
  }

  private async countFree(request: FastifyRequest): Promise<RateLimitVerdict> {
    const limit = this.limits.free;
    if (limit === 0) return undefined;
    let record;
    try {
      record = await this.storage.increment(request.ip, this.limits.windowMs, limit, 0, 'free');
    } catch (error) {
      this.logger.warn(`rate limit not applied: ${remoteText(error)}`);
      return undefined;
    }
    if (!record.isBlocked) return undefined;
    return new ApiError(
      ErrorCode.RateLimited,
      `Too many requests from ${request.ip}: at most ${String(limit)} per ${this.window()}.`,
      { 'retry-after': String(record.timeToBlockExpire) },
    );
  }

  /** Remembers whether `ip` is over the paid-route limit, as its latest count says. */
  private note(ip: string, record: RateLimitRecord): void {
    if (!record.isBlocked) {
      this.blockedUntil.delete(ip);
      return;
    }
    const now = Date.now();
    if (this.blockedUntil.size >= PRUNE_BLOCKED_AT) {
      for (const [address, until] of this.blockedUntil) {
        if (until <= now) this.blockedUntil.delete(address);
      }
    }
    this.blockedUntil.set(ip, now + record.timeToBlockExpire * 1000);
  }

  private tooMany(ip: string, retryAfterSeconds: number): ApiError {
    return new ApiError(
      ErrorCode.RateLimited,
      `Too many requests to paid routes that bought nothing from ${ip}: at most ${String(this.limits.unpaid)} per ${this.window()}; until the window ends its payments are refused too. A client that pays for each 402 it gets is never limited (a sale gives its 402 back).`,
      { 'retry-after': String(Math.max(1, retryAfterSeconds)) },
    );
  }

  private window(): string {
    return `${String(this.limits.windowMs / 1000)} s`;
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
    const handler = context.getHandler();
    const paid =
      this.reflector.get<unknown>(PAID_PRICE, handler) !== undefined ||
      this.reflector.get<boolean | undefined>(LIMITED_AS_PAID, handler) === true;
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const refusal = await this.limiter.verdict(request, paid, reply);
    if (refusal !== undefined) throw refusal;
    return true;
  }
}

/**
 * A sale: the payment guard verified and claimed a payment for this request and the answer went
 * out whole with a success status (settlement passed); an in-process paid call's answer is out
 * once written, as it reaches its caller in the same process. A stored answer sent again for a
 * payment-identifier is not one: it carries no new payment.
 */
function sold(request: FastifyRequest, reply: FastifyReply): boolean {
  const paid = request as RequestWithPayment;
  if (paid.x402Sale === undefined) return false;
  const response = reply.raw;
  // an in-process paid call (an MCP tool call) has its answer once it ended: no socket between
  const delivered =
    paid.x402Call === undefined ? response.writableFinished : response.writableEnded;
  return delivered && response.statusCode >= 200 && response.statusCode < 300;
}

/** Runs `then` once `response` is closed: at once if its client has already left. */
function whenClosed(response: ServerResponse, then: () => void): void {
  if (response.closed) then();
  else response.once('close', then);
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
