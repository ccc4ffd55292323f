import { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { PaidCalls } from './paid-calls.js';
import type { PaidCallNames } from './payment-errors.js';

const CALL: PaidCallNames = {
  route: 'mcp:get_ticker',
  resource: 'MCP get_ticker /v1/ticker/BTC',
  resourceUrl: 'mcp://tool/get_ticker',
};

/** A request as Fastify hands it over: from a socket, or in process (no socket). */
function request(headers: Record<string, string>, fromSocket: boolean): FastifyRequest {
  const socket = fromSocket ? new Socket() : { remoteAddress: '127.0.0.1' };
  return { headers, raw: { socket } } as unknown as FastifyRequest;
}

describe('PaidCalls', () => {
  it('recognises an in-process request carrying a running call’s token', () => {
    const calls = new PaidCalls();
    const entered = calls.enter(CALL);
    expect(calls.of(request({ ...entered.headers }, false))).toMatchObject(CALL);
  });

  it('cancels a call whose settlement has not begun: its signal aborts, no settlement begins', () => {
    const calls = new PaidCalls();
    const entered = calls.enter(CALL);
    const call = calls.of(request({ ...entered.headers }, false));
    expect(call?.signal.aborted).toBe(false);
    expect(entered.cancel()).toBe(true);
    expect(call?.signal.aborted).toBe(true);
    expect(call?.beginSettlement()).toBe(false);
  });

  it('never cancels a call once its settlement has begun: its outcome is to be delivered', () => {
    const calls = new PaidCalls();
    const entered = calls.enter(CALL);
    const call = calls.of(request({ ...entered.headers }, false));
    expect(call?.beginSettlement()).toBe(true);
    expect(entered.cancel()).toBe(false);
    expect(call?.signal.aborted).toBe(false);
  });

  it('ignores the same token on a request from a socket', () => {
    const calls = new PaidCalls();
    const entered = calls.enter(CALL);
    expect(calls.of(request({ ...entered.headers }, true))).toBeUndefined();
  });

  it('ignores a guessed token, and a call’s token once it has left', () => {
    const calls = new PaidCalls();
    const entered = calls.enter(CALL);
    const [name] = Object.keys(entered.headers);
    expect(calls.of(request({ [name ?? '']: 'guessed' }, false))).toBeUndefined();
    entered.leave();
    expect(calls.of(request({ ...entered.headers }, false))).toBeUndefined();
  });

  it('gives every call its own token', () => {
    const calls = new PaidCalls();
    const first = Object.values(calls.enter(CALL).headers)[0];
    const second = Object.values(calls.enter(CALL).headers)[0];
    expect(first).not.toBe(second);
    expect(first?.length).toBeGreaterThanOrEqual(43);
  });
});
