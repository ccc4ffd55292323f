import type { FastifyReply } from 'fastify';

/**
 * The buyer's connection, as a scheme's settlement watches it: nobody should be charged for an
 * answer that cannot reach them.
 */

/** The connection the answer would go out on is gone: nobody would receive what is sold. */
export function clientGone(reply: FastifyReply): boolean {
  const response = reply.raw;
  return response.destroyed || response.socket === null || response.socket.destroyed;
}

/**
 * A signal that aborts when the client's connection closes before the answer went out; `stop`
 * stops watching.
 */
export function watchDeparture(reply: FastifyReply): { signal: AbortSignal; stop: () => void } {
  const controller = new AbortController();
  const response = reply.raw;
  const onClose = (): void => {
    if (!response.writableFinished) controller.abort();
  };
  response.once('close', onClose);
  return {
    signal: controller.signal,
    stop: () => {
      response.off('close', onClose);
    },
  };
}
