import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { PaidCall } from './payment-errors.js';

/** The header an in-process request carries its paid call's one-time token in. */
const PAID_CALL_HEADER = 'x402-paid-call';

/** A paid call while it runs: the headers that mark its in-process request, and its end. */
export interface EnteredCall {
  readonly headers: Readonly<Record<string, string>>;
  readonly leave: () => void;
}

/**
 * Paid calls of another transport (an MCP tool call) that run through the HTTP pipeline as an
 * in-process request (Fastify's `inject`): the request carries a one-time random token, known
 * only inside this process while the call runs, and is recognised only when it came from no
 * socket. A client on the network cannot name a call: a guessed or replayed token, or any token
 * on a request from a socket, leaves the request an ordinary HTTP request.
 */
@Injectable()
export class PaidCalls {
  private readonly running = new Map<string, PaidCall>();

  /** Marks `call` as running; its in-process request carries `headers` until `leave()`. */
  enter(call: PaidCall): EnteredCall {
    const token = randomBytes(32).toString('base64url');
    this.running.set(token, call);
    return {
      headers: { [PAID_CALL_HEADER]: token },
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
