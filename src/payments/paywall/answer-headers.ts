import type { FastifyRequest } from 'fastify';

type Headers = Readonly<Record<string, string>>;

const pending = new WeakMap<FastifyRequest, Promise<Headers>[]>();

/**
 * Headers that belong to a paid route's answer (its attestation, say), made while the handler
 * and the settlement run: written with the answer only once it is sold, never on a 402 or an
 * error, and stored with it for a payment-identifier retry. A promise that rejects adds nothing.
 */
export function addAnswerHeaders(request: FastifyRequest, headers: Promise<Headers>): void {
  const list = pending.get(request);
  if (list === undefined) pending.set(request, [headers]);
  else list.push(headers);
}

/** The answer headers added for `request`, merged; none when nothing was added. */
export async function answerHeadersOf(request: FastifyRequest | undefined): Promise<Headers> {
  const list = request === undefined ? undefined : pending.get(request);
  if (list === undefined) return {};
  const settled = await Promise.allSettled(list);
  return Object.assign(
    {},
    ...settled.map((each) => (each.status === 'fulfilled' ? each.value : {})),
  ) as Headers;
}
