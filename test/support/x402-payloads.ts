import { randomBytes } from 'node:crypto';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { PrivateKeyAccount } from 'viem/accounts';

/** The v2 requirements a 402 carries in its PAYMENT-REQUIRED header. */
export function paymentRequiredOf(response: Response): PaymentRequired {
  const header = response.headers.get('payment-required');
  if (header === null)
    throw new Error(`expected a PAYMENT-REQUIRED header on a ${response.status}`);
  return decodePaymentRequiredHeader(header);
}

export interface AuthorizationOverrides {
  readonly to?: `0x${string}`;
  readonly value?: bigint;
  readonly validAfter?: bigint;
  readonly validBefore?: bigint;
  /** Sign with this account while claiming to be `payer` (a forged signature). */
  readonly signer?: PrivateKeyAccount;
  /** What the signature is bound to; defaults to the requirement itself. */
  readonly domain?: {
    name?: string;
    version?: string;
    chainId?: number;
    verifyingContract?: `0x${string}`;
  };
}

/**
 * An EIP-3009 `exact` payment for `accepted`, signed by hand so each field can be made wrong
 * on purpose: what the official clients would send, less their safety checks.
 */
export async function signedPayment(
  payer: PrivateKeyAccount,
  accepted: PaymentRequirements,
  overrides: AuthorizationOverrides = {},
): Promise<PaymentPayload> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const nonce: `0x${string}` = `0x${randomBytes(32).toString('hex')}`;
  const authorization = {
    from: payer.address,
    to: overrides.to ?? (accepted.payTo as `0x${string}`),
    value: overrides.value ?? BigInt(accepted.amount),
    validAfter: overrides.validAfter ?? now - 600n,
    validBefore: overrides.validBefore ?? now + BigInt(accepted.maxTimeoutSeconds),
    nonce,
  };
  const extra = accepted.extra as { name: string; version: string };
  const signature = await (overrides.signer ?? payer).signTypedData({
    domain: {
      name: overrides.domain?.name ?? extra.name,
      version: overrides.domain?.version ?? extra.version,
      chainId: overrides.domain?.chainId ?? Number(accepted.network.split(':')[1]),
      verifyingContract: overrides.domain?.verifyingContract ?? (accepted.asset as `0x${string}`),
    },
    types: {
      TransferWithAuthorization: [
        { name: 'from', type: 'address' },
        { name: 'to', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' },
        { name: 'validBefore', type: 'uint256' },
        { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  });
  return {
    x402Version: 2,
    accepted,
    payload: {
      signature,
      authorization: {
        ...authorization,
        value: authorization.value.toString(),
        validAfter: authorization.validAfter.toString(),
        validBefore: authorization.validBefore.toString(),
      },
    },
  };
}

/** The PAYMENT-SIGNATURE header for a payload. */
export function v2Header(payload: PaymentPayload): Record<string, string> {
  return { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) };
}

/** The same signed payment as an x402 v1 client would send it. */
export function v1Header(
  payload: PaymentPayload,
  network = 'base-sepolia',
): Record<string, string> {
  const v1 = { x402Version: 1, scheme: payload.accepted.scheme, network, payload: payload.payload };
  return { 'X-PAYMENT': Buffer.from(JSON.stringify(v1)).toString('base64') };
}
