import type { BeforeVerifyHook, VerifyContext } from '@x402/core/server';
import type { PaymentPayload, SchemeServerHooks } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import type { Hex } from 'viem';
import { exactEvmPayload, type ExactEvmAuthorization } from './payment-acceptance.js';
import {
  transferAuthorizationSigner,
  type TokenDomain,
} from '../../../chain/eip3009-authorization.js';

/** The SDK facilitator refuses an authorization that expires within this many seconds. */
const MIN_VALIDITY_S = 6n;

type BeforeVerifyResult = Awaited<ReturnType<BeforeVerifyHook>>;

/** Whether the token would execute the transfer now (an `eth_call`); undefined: no answer. */
export type TransferCheck = (
  asset: Hex,
  authorization: ExactEvmAuthorization,
  signature: Hex,
) => Promise<boolean | undefined>;

/**
 * The SDK's `exact` server scheme for a seller whose facilitator runs in this process, verifying
 * with one chain call instead of the facilitator's four and its pure-JS signature recovery: an
 * EOA's EIP-3009 signature is recovered natively here, the offer's terms and validity window
 * are checked locally, and the token is asked whether it would execute the transfer now (the
 * facilitator's own simulated transfer: balance, an unused nonce, contract payers). Its
 * settlement checks the terms and the signer again, natively (`SellerExactFacilitator`), and the
 * token refuses the rest at gas estimation, before anything is sent. Whatever this cannot
 * accept (a smart-wallet signature, a non-canonical or wrong one, a transfer the token refuses,
 * a chain that does not answer) goes to the facilitator's verify as before, for its precise
 * reason or its outage.
 */
export class SellerExactScheme extends ExactEvmScheme {
  readonly schemeHooks: SchemeServerHooks = {
    onBeforeVerify: (context) => this.verified(context),
  };

  constructor(private readonly wouldTransfer: TransferCheck) {
    super();
  }

  private async verified(context: VerifyContext): Promise<BeforeVerifyResult> {
    const verdict = verifiedLocally(context);
    if (verdict === undefined) return undefined;
    const { authorization, signature } = exactEvmPayload(
      (context.paymentPayload as PaymentPayload).payload,
    );
    const asset = context.requirements.asset as Hex;
    return (await this.wouldTransfer(asset, authorization, signature)) === true
      ? verdict
      : undefined;
  }
}

/**
 * `{skip, result: valid}` when the authorization is an EOA's and pays exactly the offer now, as
 * far as can be told without the chain.
 */
export function verifiedLocally(
  context: Pick<VerifyContext, 'paymentPayload' | 'requirements'>,
  nowMs: number = Date.now(),
): BeforeVerifyResult {
  const payload = context.paymentPayload as PaymentPayload;
  const { requirements } = context;
  const { accepted } = payload;
  if (requirements.scheme !== 'exact' || accepted.scheme !== 'exact') return undefined;
  if (accepted.network !== requirements.network) return undefined;
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

/** The EIP-3009 authorization and signature of an `exact` payload; undefined for another kind. */
export function exactAuthorization(
  raw: unknown,
): { authorization: ExactEvmAuthorization; signature: Hex } | undefined {
  try {
    return exactEvmPayload(raw);
  } catch {
    return undefined;
  }
}
