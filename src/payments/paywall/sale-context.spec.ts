import { EventEmitter } from 'node:events';
import type { FastifyReply } from 'fastify';
import { paidRequest } from '../../../test/support/payment-doubles.js';
import { requestOf, saleContextOf } from './sale-context.js';

/** A reply's connection: open until the test closes it, finished or not. */
class Connection extends EventEmitter {
  writableFinished = false;
  destroyed = false;
  socket: { destroyed: boolean } | null = { destroyed: false };
}

function replyOn(connection: Connection): FastifyReply {
  return { raw: connection } as unknown as FastifyReply;
}

describe('saleContextOf', () => {
  it('tells a scheme the route, resource and label of the call, and hands the paywall its request', () => {
    const request = paidRequest();
    const context = saleContextOf(request, replyOn(new Connection()));
    expect(context).toMatchObject({
      route: '/v1/ticker/:symbol',
      resource: `GET ${request.url}`,
      label: `GET ${request.url}`,
    });
    expect(requestOf(context)).toBe(request);
    expect(() => requestOf({ ...context })).toThrow("not a paywall's sale context");
  });

  it('aborts its signal when the connection closes before the answer was written', () => {
    const connection = new Connection();
    const context = saleContextOf(paidRequest(), replyOn(connection));
    expect(context.signal.aborted).toBe(false);
    connection.emit('close');
    expect(context.signal.aborted).toBe(true);
  });

  it('does not abort once the answer was written in full', () => {
    const connection = new Connection();
    const context = saleContextOf(paidRequest(), replyOn(connection));
    connection.writableFinished = true;
    connection.emit('close');
    expect(context.signal.aborted).toBe(false);
  });

  it('is aborted from the start for a buyer already gone', () => {
    const connection = new Connection();
    connection.socket = null;
    expect(saleContextOf(paidRequest(), replyOn(connection)).signal.aborted).toBe(true);
  });

  it('watches a response once however many sales it carries', () => {
    const connection = new Connection();
    const reply = replyOn(connection);
    const contexts = Array.from({ length: 20 }, () => saleContextOf(paidRequest(), reply));
    expect(connection.listenerCount('close')).toBe(1);
    connection.emit('close');
    expect(contexts.every((context) => context.signal.aborted)).toBe(true);
  });
});
