import { Logger } from '@nestjs/common';
import { ApiError, ErrorCode } from '../../common/api-error.js';
import { backoffDelay, type Backoff } from '../../common/backoff.js';
import { StartupError } from '../../common/startup-error.js';
import type { MetricsService } from '../../metrics/metrics.service.js';
import { isFacilitatorUnreachable, reasonOf } from './facilitator-client.js';

/** Waits before asking an unreachable facilitator again, one per failure. */
const FACILITATOR_RETRY: Backoff = { baseMs: 1_000, maxMs: 30_000 };

/**
 * Whether the facilitator has confirmed the paid routes. A facilitator that answers and does not
 * support a route fails start-up; one that cannot be reached does not: the service starts, paid
 * routes answer 503 and the check is retried in the background with backoff.
 */
export class FacilitatorReadiness {
  private readonly logger = new Logger(FacilitatorReadiness.name);
  private confirmed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retries = 0;
  private nextAttemptAt = 0;
  private stopped = false;

  /**
   * `confirm` asks the facilitator (throws when it cannot or will not confirm); `onConfirmed`
   * runs once it did; `mode` names the facilitator in messages.
   */
  constructor(
    private readonly confirm: () => Promise<void>,
    private readonly onConfirmed: () => void,
    private readonly mode: string,
    private readonly metrics: MetricsService,
  ) {}

  /** The first check, at start-up. */
  async start(): Promise<void> {
    const unreachable = await this.attempt();
    if (unreachable === undefined) return;
    this.logger.warn(
      `The ${this.mode} x402 facilitator cannot be reached (${reasonOf(unreachable)}); ` +
        'serving anyway: paid routes answer 503 facilitator_unavailable until it confirms them. Retrying in the background.',
    );
    this.scheduleRetry();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
  }

  /** The facilitator has confirmed the paid routes: they can be sold. */
  get ready(): boolean {
    return this.confirmed;
  }

  /** Seconds until the facilitator is asked again (at least 1), for `Retry-After`. */
  retryAfterSeconds(): number {
    return Math.max(1, Math.ceil((this.nextAttemptAt - Date.now()) / 1000));
  }

  /** Throws the client's 503 until the facilitator confirmed the routes. */
  assertReady(): void {
    if (this.confirmed) return;
    throw new ApiError(
      ErrorCode.FacilitatorUnavailable,
      'The payment facilitator has not confirmed the paid routes yet; nothing was charged.',
      { 'retry-after': String(this.retryAfterSeconds()) },
    );
  }

  /** Undefined once confirmed; the failure when the facilitator could not be reached. */
  private async attempt(): Promise<unknown> {
    try {
      await this.confirm();
    } catch (error) {
      if (isFacilitatorUnreachable(error)) {
        this.metrics.facilitatorError('supported');
        return error;
      }
      throw new StartupError(
        `Cannot start: the ${this.mode} x402 facilitator could not confirm the paid routes ` +
          `(${reasonOf(error)}). Check X402_FACILITATOR, X402_NETWORK and the asset settings, ` +
          'or run everything locally with `npm start` without X402_PAY_TO.',
        { cause: error },
      );
    }
    this.confirmed = true;
    this.onConfirmed();
    return undefined;
  }

  private scheduleRetry(): void {
    if (this.stopped) return;
    const delay = backoffDelay(this.retries, FACILITATOR_RETRY);
    this.retries += 1;
    this.nextAttemptAt = Date.now() + delay;
    this.retryTimer = setTimeout(() => void this.retry(), delay);
    this.retryTimer.unref();
  }

  private async retry(): Promise<void> {
    try {
      if ((await this.attempt()) === undefined) return;
    } catch (error) {
      // It answers now but refuses a route: too late to stop start-up, so say it loudly.
      this.logger.error(reasonOf(error));
    }
    this.scheduleRetry();
  }
}
