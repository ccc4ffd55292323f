import type { BeforeVerifyHook, VerifyContext } from '@x402/core/server';
import type { PaymentPayload, SchemeServerHooks } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import type { Hex } from 'viem';
import { exactEvmPayload, type ExactEvmAuthorization } from './payment-acceptance.js';
import { transferAuthorizationSigner, type TokenDomain } from './transfer-authorization.js';

/** The SDK facilitator refuses an authorization that expires within this many seconds. */
const MIN_VALIDITY_S = 6n;

type BeforeVerifyResult = Awaited<ReturnType<BeforeVerifyHook>>;

/**
 * The SDK's `exact` server scheme for a seller whose facilitator runs in this process. Its
 * settlement runs the facilitator's own checks again (signature, recipient, amount, validity)
 * before it sends anything, and a transfer the token would refuse (balance, a used nonce) fails
 * its gas estimate, also before anything is sent: a refusal then is a 402, proven by the trace
 * of every chain call. So the verification before the handler does not need the facilitator's
 * chain reads (two code lookups, the asset check, a simulated transfer) and its pure-JS signature
 * recovery: an EOA's EIP-3009 signature is recovered natively here and the offer's terms are
 * checked locally. Whatever this cannot decide (a smart-wallet signature, a non-canonical or
 * wrong one, an expired window) goes to the facilitator as before, for its precise reason.
 */
export class SellerExactScheme extends ExactEvmScheme {
  readonly schemeHooks: SchemeServerHooks = {
    onBeforeVerify: (context) => Promise.resolve(verifiedLocally(context)),
  };
}

/** `{skip, result: valid}` when the authorization is an EOA's and pays exactly the offer now. */
export function verifiedLocally(
  context: Pick<VerifyContext, 'paymentPayload' | 'requirements'>,
  nowMs: number = Date.now(),
): BeforeVerifyResult {
  const payload = context.paymentPayload as PaymentPayload;
  const { requirements } = context;
  if (requirements.scheme !== 'exact' || payload.accepted.network !== requirements.network) {
    return undefined;
  }
  const domain = tokenDomain(requirements);
  const signed = exactAuthorization(payload.payload);
  if (domain === undefined || signed === undefined) return undefined;
  const { authorization, signature } = signed;
  const now = BigInt(Math.floor(nowMs / 1000));
  const paysTheOffer =
    authorization.to.toLowerCase() === requirements.payTo.toLowerCase() &&
    authorization.value === requirements.amount &&
    BigInt(authorization.validAfter) <= now &&
    BigInt(authorization.validBefore) >= now + MIN_VALIDITY_S;
  if (!paysTheOffer) return undefined;
  const signer = transferAuthorizationSigner(domain, authorization, signature);
  if (signer !== authorization.from.toLowerCase()) return undefined;
  return { skip: true, result: { isValid: true, payer: authorization.from } };
}

function tokenDomain(requirements: VerifyContext['requirements']): TokenDomain | undefined {
  const { name, version } = requirements.extra;
  if (typeof name !== 'string' || typeof version !== 'string') return undefined;
  const chainId = Number(requirements.network.slice(requirements.network.indexOf(':') + 1));
  if (!Number.isSafeInteger(chainId)) return undefined;
  return { name, version, chainId, verifyingContract: requirements.asset as Hex };
}

function exactAuthorization(
  raw: unknown,
): { authorization: ExactEvmAuthorization; signature: Hex } | undefined {
  try {
    return exactEvmPayload(raw);
  } catch {
    return undefined;
  }
}
