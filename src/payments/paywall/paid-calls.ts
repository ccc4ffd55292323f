import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { PaidCall, PaidCallNames } from './payment-errors.js';

/** The header an in-process request carries its paid call's one-time token in. */
const PAID_CALL_HEADER = 'x402-paid-call';

/** A paid call while it runs: the headers that mark its in-process request, and its end. */
export interface EnteredCall {
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Cancels the call unless its settlement has begun. True: cancelled, nothing is or will be
   * settled (its request ends as a departed client's). False: its settlement is in flight, and
   * its outcome (the answer with its receipt, or `settlement_unknown`) is still to be delivered.
   */
  readonly cancel: () => boolean;
  readonly leave: () => void;
}

/**
 * Paid calls of another transport (an MCP tool call) that run through the HTTP pipeline as an
 * in-process request (Fastify's `inject`): the request carries a one-time random token, known
 * only inside this process while the call runs, and is recognised only when it came from no
 * socket. A client on the network cannot name a call: a guessed or replayed token, or any token
 * on a request from a socket, leaves the request an ordinary HTTP request. A call is cancelled,
 * or its settlement begun, never both: once money may move, its outcome is what it answers.
 */
@Injectable()
export class PaidCalls {
  private readonly running = new Map<string, PaidCall>();

  /** Marks a call as running; its in-process request carries `headers` until `leave()`. */
  enter(names: PaidCallNames): EnteredCall {
    const token = randomBytes(32).toString('base64url');
    const cancelled = new AbortController();
    let settling = false;
    this.running.set(token, {
      ...names,
      signal: cancelled.signal,
      beginSettlement: () => {
        if (cancelled.signal.aborted) return false;
        settling = true;
        return true;
      },
    });
    return {
      headers: { [PAID_CALL_HEADER]: token },
      cancel: () => {
        if (settling) return false;
        cancelled.abort();
        return true;
      },
      leave: () => {
        this.running.delete(token);
      },
    };
  }

  /** The paid call `request` stands for, or undefined for an ordinary HTTP request. */
  of(request: FastifyRequest): PaidCall | undefined {
    const token = request.headers[PAID_CALL_HEADER];
    if (typeof token !== 'string' || request.raw.socket instanceof Socket) return undefined;
    return this.running.get(token);
  }
}
