/**
 * A batch-settlement deposit verified natively (deposit-verification.ts) against the SDK's own
 * facilitator verification, on a local anvil with the channel contract and test USDC: the same
 * verdict and channel state for a valid deposit, read with two `eth_call`s and no
 * `eth_getCode`; every deposit it cannot prove valid left to the SDK, which refuses it.
 */
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner, type FacilitatorEvmSigner } from '@x402/evm';
import {
  BatchSettlementEvmScheme as ClientScheme,
  signVoucher,
} from '@x402/evm/batch-settlement/client';
import { BatchSettlementEvmScheme as SdkFacilitatorScheme } from '@x402/evm/batch-settlement/facilitator';
import { createWalletClient, http, publicActions, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { verifyDepositNatively } from '../src/payments/schemes/batch-settlement/deposit-verification.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { USDC } from './support/paying-clients.js';
import { RpcProxy } from './support/rpc-proxy.js';
import { paymentRequiredOf } from './support/x402-payloads.js';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

interface DepositPayload {
  type: 'deposit';
  channelConfig: Record<string, unknown>;
  voucher: { channelId: Hex; maxClaimableAmount: string; signature: Hex };
  deposit: {
    amount: string;
    authorization: {
      erc3009Authorization: {
        validAfter: string;
        validBefore: string;
        salt: string;
        signature: Hex;
      };
    };
  };
}

describe('a deposit verified natively', () => {
  let stack: PaidApp;
  let proxy: RpcProxy;
  let signer: FacilitatorEvmSigner;
  let sdk: SdkFacilitatorScheme;
  let requirement: PaymentRequirements;

  beforeAll(async () => {
    stack = await startPaidApp({ refresh: false });
    proxy = await RpcProxy.start(stack.chain.rpcUrl);
    const settler = privateKeyToAccount(stack.chain.accounts[0]!);
    const client = createWalletClient({
      account: settler,
      chain: stack.chain.publicClient.chain,
      transport: http(proxy.url),
    }).extend(publicActions);
    signer = toFacilitatorEvmSigner({
      address: settler.address,
      readContract: (args) => client.readContract(args),
      verifyTypedData: (args) => client.verifyTypedData(args as never),
      writeContract: (args) => client.writeContract(args),
      sendTransaction: (args) => client.sendTransaction(args),
      waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
      getCode: (args) => client.getCode(args),
    });
    sdk = new SdkFacilitatorScheme(signer, settler);
    const challenge = await stack.service.get('/v1/ticker/BTC');
    const offered = paymentRequiredOf(challenge).accepts.find(
      (accept) => accept.scheme === 'batch-settlement',
    );
    if (offered === undefined) throw new Error('no batch-settlement offer');
    requirement = offered;
  }, 120_000);

  afterAll(async () => {
    await proxy.close();
    await stack.close();
  });

  /** A fresh buyer's first payment: a deposit of ten prices, signed by the official client. */
  async function freshDeposit(
    holding: bigint = USDC,
  ): Promise<{ payment: PaymentPayload; payer: ReturnType<typeof privateKeyToAccount> }> {
    const payer = privateKeyToAccount(generatePrivateKey());
    await stack.chain.mintUsdc(payer.address, holding);
    const scheme = new ClientScheme(payer, {
      rpcUrl: stack.chain.rpcUrl,
      depositPolicy: { depositMultiplier: 10 },
    });
    const created = await scheme.createPaymentPayload(2, requirement);
    return {
      payment: { x402Version: 2, accepted: requirement, payload: created.payload },
      payer,
    };
  }

  it("gives the SDK's verdict and channel state for a valid deposit, with no eth_getCode and two eth_calls", async () => {
    const { payment } = await freshDeposit();
    proxy.requests.length = 0;
    const native = await verifyDepositNatively(signer, payment, requirement);
    const calls = proxy.requests.map(({ method }) => method);
    expect(calls.sort()).toEqual(['eth_call', 'eth_call']);
    expect(native).toBeDefined();
    expect(native).toEqual(await sdk.verify(payment, requirement));
    expect(native).toMatchObject({ isValid: true });
  });

  it.each<
    [
      string,
      (raw: DepositPayload, payer: ReturnType<typeof privateKeyToAccount>) => Promise<void> | void,
    ]
  >([
    [
      'an amount other than the authorization signs',
      (raw) => {
        raw.deposit.amount = (BigInt(raw.deposit.amount) + 1n).toString();
      },
    ],
    [
      'an authorization signed by another key',
      async (raw) => {
        const auth = raw.deposit.authorization.erc3009Authorization;
        auth.signature = await privateKeyToAccount(generatePrivateKey()).signMessage({
          message: 'not the authorization',
        });
      },
    ],
    [
      "the authorization's high-s twin (the token refuses it)",
      (raw) => {
        const auth = raw.deposit.authorization.erc3009Authorization;
        const s = BigInt(`0x${auth.signature.slice(66, 130)}`);
        const v = Number.parseInt(auth.signature.slice(130), 16);
        auth.signature =
          `${auth.signature.slice(0, 66)}${(N - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}` as Hex;
      },
    ],
    [
      'a voucher signed by another key',
      async (raw) => {
        raw.voucher = await signVoucher(
          privateKeyToAccount(generatePrivateKey()),
          raw.voucher.channelId,
          raw.voucher.maxClaimableAmount,
          'eip155:84532',
        );
      },
    ],
    [
      'a voucher over the deposit',
      async (raw, payer) => {
        raw.voucher = await signVoucher(
          payer,
          raw.voucher.channelId,
          (BigInt(raw.deposit.amount) + 1n).toString(),
          'eip155:84532',
        );
      },
    ],
    [
      'an expired authorization',
      (raw) => {
        raw.deposit.authorization.erc3009Authorization.validBefore = '1';
      },
    ],
  ])('leaves %s to the SDK, which refuses it', async (_, change) => {
    const { payment, payer } = await freshDeposit();
    const copy = structuredClone(payment);
    await change(copy.payload as unknown as DepositPayload, payer);
    expect(await verifyDepositNatively(signer, copy, requirement)).toBeUndefined();
    expect(await sdk.verify(copy, requirement)).toMatchObject({ isValid: false });
  });

  it('leaves a deposit whose salt is no number to the SDK, which throws on it', async () => {
    const { payment } = await freshDeposit();
    const copy = structuredClone(payment);
    (copy.payload as unknown as DepositPayload).deposit.authorization.erc3009Authorization.salt =
      'salt';
    expect(await verifyDepositNatively(signer, copy, requirement)).toBeUndefined();
    await expect(sdk.verify(copy, requirement)).rejects.toThrow();
  });

  it("leaves a deposit over the payer's balance to the SDK, which refuses it", async () => {
    const { payment } = await freshDeposit(1n);
    expect(await verifyDepositNatively(signer, payment, requirement)).toBeUndefined();
    expect(await sdk.verify(payment, requirement)).toMatchObject({
      isValid: false,
      invalidReason: expect.stringContaining('insufficient_balance') as string,
    });
  });
});
