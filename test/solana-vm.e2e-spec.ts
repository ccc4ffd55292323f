import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { SOLANA_DEVNET_CAIP2, toFacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import { registerExactSvmScheme } from '@x402/svm/exact/facilitator';
import { generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import { SolanaFacilitatorClient } from '../src/payments/facilitator/solana-facilitator.js';
import { handBuiltTransaction, solanaKeypair } from './support/solana-buyers.js';
import { SolanaRpcServer } from './support/solana-rpc.js';
import { DEVNET_USDC } from './support/solana-vm.js';

/**
 * The local Solana VM behind its JSON-RPC face, driven by the SDK's own client and facilitator:
 * what the SVM scheme's tests stand on.
 */
describe('the local Solana VM and its JSON-RPC', () => {
  let rpc: SolanaRpcServer;
  let feePayer: KeyPairSigner;
  let buyer: KeyPairSigner;
  let payTo: KeyPairSigner;
  let facilitator: x402Facilitator;

  function requirements(amount = '2000'): PaymentRequirements {
    return {
      scheme: 'exact',
      network: SOLANA_DEVNET_CAIP2,
      asset: DEVNET_USDC,
      amount,
      payTo: payTo.address,
      maxTimeoutSeconds: 60,
      extra: { feePayer: feePayer.address },
    };
  }

  async function payload(accepted: PaymentRequirements): Promise<PaymentPayload> {
    const client = new ExactSvmClient(buyer, { rpcUrl: rpc.url });
    const created = await client.createPaymentPayload(2, accepted);
    return { ...created, accepted };
  }

  beforeAll(async () => {
    rpc = await SolanaRpcServer.start();
    [feePayer, buyer, payTo] = await Promise.all([
      generateKeyPairSigner(),
      generateKeyPairSigner(),
      generateKeyPairSigner(),
    ]);
    rpc.vm.airdrop(feePayer.address, 10_000_000_000n);
    await rpc.vm.setTokenBalance(buyer.address, 1_000_000n);
    await rpc.vm.setTokenBalance(payTo.address, 0n);
    facilitator = new x402Facilitator();
    registerExactSvmScheme(facilitator, {
      signer: toFacilitatorSvmSigner(feePayer, { defaultRpcUrl: rpc.url }),
      networks: SOLANA_DEVNET_CAIP2,
    });
  });

  afterAll(async () => {
    await rpc.close();
  });

  it('has the test USDC mint at devnet USDC and the balances set', async () => {
    expect(rpc.vm.account(DEVNET_USDC)?.data.length).toBe(82);
    expect(await rpc.vm.tokenBalance(buyer.address)).toBe(1_000_000n);
  });

  it("settles the official client's transfer: exactly the amount moves, confirmed by signature", async () => {
    const paid = await payload(requirements());
    expect(await facilitator.verify(paid, requirements())).toMatchObject({ isValid: true });
    const settled = await facilitator.settle(paid, requirements());
    expect(settled).toMatchObject({ success: true, network: SOLANA_DEVNET_CAIP2 });
    expect(await rpc.vm.tokenBalance(payTo.address)).toBe(2000n);
    expect(await rpc.vm.tokenBalance(buyer.address)).toBe(998_000n);
    expect(rpc.calls).toEqual(
      expect.arrayContaining([
        'getAccountInfo',
        'getLatestBlockhash',
        'simulateTransaction',
        'sendTransaction',
        'getSignatureStatuses',
      ]),
    );
  });

  it('lands a held submission only when released, and never the same transaction twice', async () => {
    const paid = await payload(requirements());
    const wire = Buffer.from((paid.payload as { transaction: string }).transaction, 'base64');
    rpc.holdSubmissions();
    const settling = facilitator.settle(paid, requirements());
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await rpc.vm.tokenBalance(payTo.address)).toBe(2000n);
    const [landed] = rpc.landHeld();
    expect(landed?.err).toBeNull();
    expect(await settling).toMatchObject({ success: true });
    expect(await rpc.vm.tokenBalance(payTo.address)).toBe(4000n);
    // the buyer's signed bytes alone cannot land: the fee payer has not signed them
    expect(rpc.vm.send(wire).err).not.toBeNull();
    expect(await rpc.vm.tokenBalance(payTo.address)).toBe(4000n);
  });

  it("the service's embedded facilitator refuses a transaction asking a high compute budget (the SDK's caps)", async () => {
    const key = await solanaKeypair();
    rpc.vm.airdrop(key.signer.address, 1_000_000_000n);
    const client = await SolanaFacilitatorClient.create(
      key.bytes,
      rpc.url,
      [SOLANA_DEVNET_CAIP2],
      1500,
    );
    const accepted = { ...requirements(), extra: { feePayer: key.signer.address } };
    const paid = async (
      computeUnitLimit: number,
      computeUnitPrice: number,
    ): Promise<PaymentPayload> => ({
      x402Version: 2,
      accepted,
      payload: {
        transaction: await handBuiltTransaction(rpc, buyer, accepted, {
          computeUnitLimit,
          computeUnitPrice,
        }),
      },
    });
    expect(await client.verify(await paid(20_000, 1), accepted)).toMatchObject({ isValid: true });
    for (const [limit, price] of [
      [1_400_000, 1],
      [40_001, 1],
      [20_000, 5_000_000],
      [20_000, 50_001],
    ] as const) {
      expect(await client.verify(await paid(limit, price), accepted)).toMatchObject({
        isValid: false,
      });
    }
    expect(rpc.vm.lamports(key.signer.address)).toBe(1_000_000_000n);
  });
});
