import type { PaymentPayload, ResourceServerExtension } from '@x402/core/types';

/**
 * x402 extensions a buyer's client asks for by naming them in its payment's `extensions`: not
 * declared on the routes (so not in the 402, and a client echoing the 402 does not ask), but
 * declared for a payment that names them. Other features provide them under this token.
 */
export const REQUESTED_EXTENSIONS = Symbol('RequestedExtensions');

export interface RequestedExtension {
  readonly extension: ResourceServerExtension;
  /** What the route would have declared, handed to the extension's hooks. */
  readonly declaration: unknown;
}

/** The route's declared extensions plus those of `requestable` the payment asks for. */
export function declaredForPayment(
  declared: Record<string, unknown> | undefined,
  payload: PaymentPayload,
  requestable: readonly RequestedExtension[],
): Record<string, unknown> | undefined {
  const asked = payload.extensions ?? {};
  const requested = requestable.filter(({ extension }) => Object.hasOwn(asked, extension.key));
  if (requested.length === 0) return declared;
  return {
    ...declared,
    ...Object.fromEntries(
      requested.map(({ extension, declaration }) => [extension.key, declaration]),
    ),
  };
}
