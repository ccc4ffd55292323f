import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { HTTPResponseInstructions } from '@x402/core/server';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { networkFromV1Name } from '../networks/known-networks.js';
import { encodeHeaderJson, PAYMENT_REQUIRED_HEADER, toV1PaymentRequired } from './x402-wire.js';

/**
 * The 402 as this service sends it, built once per route and resource URL from what the x402
 * server answers, then narrowed (networks offered now) or given a reason without rebuilding.
 */

/** A 402 ready to send: v2 PAYMENT-REQUIRED header and the v1-shaped JSON body. */
export interface PaymentChallenge {
  readonly kind: 'challenge';
  readonly headers: Readonly<Record<string, string>>;
  readonly body: ReturnType<typeof toV1PaymentRequired>;
  readonly requirements: readonly PaymentRequirements[];
  /** The v2 PaymentRequired the header encodes. */
  readonly required: PaymentRequired;
}

/** What the v1 body of a route's 402 says besides the requirements. */
export interface ChallengeContext {
  readonly method: string;
  /** The route's response schema, for discovery. */
  readonly outputSchema: Record<string, unknown>;
  /** Whether v1 clients are offered a scheme on a network. */
  readonly offeredToV1: (scheme: string, network: string) => boolean;
}

/** The x402 server's payment-error answer as a 402 ready to send (header and v1 body). */
export function challengeFrom(
  response: HTTPResponseInstructions,
  { method, outputSchema, offeredToV1 }: ChallengeContext,
): PaymentChallenge {
  const encoded = response.headers[PAYMENT_REQUIRED_HEADER];
  if (encoded === undefined)
    throw new Error('x402 server answered a payment error without PAYMENT-REQUIRED');
  const required = decodePaymentRequiredHeader(encoded);
  const body = toV1PaymentRequired(
    required,
    { input: { type: 'http', method, discoverable: true }, output: outputSchema },
    offeredToV1,
  );
  const headers = { ...response.headers };
  delete headers['Content-Type'];
  return { kind: 'challenge', headers, body, requirements: required.accepts, required };
}

/** Each 402 offering only some networks, built once per set of networks. */
const restricted = new WeakMap<PaymentChallenge, Map<string, PaymentChallenge>>();

/** The same 402 offering only `networks` (all of them: the same object). */
export function onNetworks(
  challenge: PaymentChallenge,
  networks: readonly string[],
): PaymentChallenge {
  if (challenge.requirements.every((requirement) => networks.includes(requirement.network))) {
    return challenge;
  }
  const key = networks.join(',');
  let byNetworks = restricted.get(challenge);
  if (byNetworks === undefined) {
    byNetworks = new Map<string, PaymentChallenge>();
    restricted.set(challenge, byNetworks);
  }
  let narrowed = byNetworks.get(key);
  if (narrowed === undefined) {
    const accepts = challenge.required.accepts.filter((accept) =>
      networks.includes(accept.network),
    );
    const required = { ...challenge.required, accepts };
    narrowed = {
      ...challenge,
      required,
      requirements: accepts,
      headers: { ...challenge.headers, [PAYMENT_REQUIRED_HEADER]: encodeHeaderJson(required) },
      body: {
        ...challenge.body,
        accepts: challenge.body.accepts.filter((accept) =>
          networks.includes(networkFromV1Name(accept.network)),
        ),
      },
    };
    byNetworks.set(key, narrowed);
  }
  return narrowed;
}

/** The same 402 with the reason a payment was refused, in the header and the body. */
export function withReason(challenge: PaymentChallenge, error: string): PaymentChallenge {
  const required = { ...challenge.required, error };
  return {
    ...challenge,
    required,
    headers: {
      ...challenge.headers,
      [PAYMENT_REQUIRED_HEADER]: encodeHeaderJson(required),
    },
    body: { ...challenge.body, error },
  };
}
