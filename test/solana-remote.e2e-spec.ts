/**
 * Remote mode on Solana: the service asks an x402 facilitator over HTTP (one on loopback that
 * settles on the local chain and on the local Solana VM) and proves each sale from the Solana
 * RPC itself: a facilitator's "success" for a transaction the chain never saw sells nothing.
 */
import {
  createKeyPairSignerFromBytes,
  getBase58Decoder,
  getBase64Encoder,
  getTransactionDecoder,
  type KeyPairSigner,
} from '@solana/kit';
import type { FacilitatorClient } from '@x402/core/server';
import type {
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from '@x402/core/types';
import { SOLANA_DEVNET_CAIP2 } from '@x402/svm';
import { EmbeddedFacilitatorClient } from '../src/payments/facilitator/embedded-facilitator.js';
import { EVERY_EMBEDDED_SCHEME } from './support/embedded-schemes.js';
import { SolanaFacilitatorClient } from '../src/payments/facilitator/solana-facilitator.js';
import { FacilitatorServer } from './support/facilitator-server.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { handBuiltTransaction, solanaBuyer, solanaKeypair } from './support/solana-buyers.js';
import { SolanaRpcServer } from './support/solana-rpc.js';
import { paymentRequiredOf, v2Header } from './support/x402-payloads.js';

const TICKER = '/v1/ticker/BTC';

/** One facilitator for both networks; `lying`: Solana settlements claim success, send nothing. */
class BothNetworks implements FacilitatorClient {
  lying = false;

  constructor(
    private readonly evm: FacilitatorClient,
    private readonly solana: FacilitatorClient,
    private readonly feePayer: KeyPairSigner,
  ) {}

  private of(requirements: PaymentRequirements): FacilitatorClient {
    return requirements.network.startsWith('solana:') ? this.solana : this.evm;
  }

  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    return this.of(requirements).verify(payload, requirements);
  }

  async settle(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
  ): Promise<SettleResponse> {
    if (!this.lying || !requirements.network.startsWith('solana:')) {
      return this.of(requirements).settle(payload, requirements);
    }
    const wire = getBase64Encoder().encode(String(payload.payload['transaction']));
    const { messageBytes } = getTransactionDecoder().decode(wire);
    const [signed] = await this.feePayer.signMessages([
      { content: new Uint8Array(messageBytes), signatures: {} },
    ]);
    const signature = signed?.[this.feePayer.address] ?? new Uint8Array(64);
    return {
      success: true,
      transaction: getBase58Decoder().decode(signature),
      network: requirements.network,
      payer: '',
    };
  }

  async getSupported(): Promise<SupportedResponse> {
    const [evm, solana] = await Promise.all([this.evm.getSupported(), this.solana.getSupported()]);
    return {
      kinds: [...evm.kinds, ...solana.kinds],
      extensions: [...new Set([...evm.extensions, ...solana.extensions])],
      signers: { ...evm.signers, ...solana.signers },
    };
  }
}

describe('selling on Solana through a remote facilitator', () => {
  let stack: PaidApp;
  let rpc: SolanaRpcServer;
  let server: FacilitatorServer;
  let facilitator: BothNetworks;
  let payTo: KeyPairSigner;

  beforeAll(async () => {
    rpc = await SolanaRpcServer.start();
    payTo = (await solanaKeypair()).signer;
    await rpc.vm.setTokenBalance(payTo.address, 0n);
    stack = await startPaidApp({
      beforeApp: async (chain) => {
        const feePayer = await solanaKeypair();
        rpc.vm.airdrop(feePayer.signer.address, 10_000_000_000n);
        facilitator = new BothNetworks(
          new EmbeddedFacilitatorClient(
            chain.accounts[2]!,
            chain.rpcUrl,
            'eip155:84532',
            EVERY_EMBEDDED_SCHEME,
          ),
          await SolanaFacilitatorClient.create(
            feePayer.bytes,
            rpc.url,
            [SOLANA_DEVNET_CAIP2],
            1500,
          ),
          await createKeyPairSignerFromBytes(feePayer.bytes),
        );
        server = await FacilitatorServer.start(facilitator);
        return {
          X402_FACILITATOR: 'remote',
          X402_FACILITATOR_URL: server.url,
          X402_NETWORKS: 'base-sepolia,solana-devnet',
          X402_SCHEMES: 'exact',
          X402_PAY_TO_SOLANA: payTo.address,
          X402_SOLANA_RPC_URL: rpc.url,
        };
      },
    });
  });

  afterAll(async () => {
    await stack.close();
    await server.close();
    await rpc.close();
  });

  it('sells to the official Solana client, and the pay-to receives exactly the price', async () => {
    const buyer = await solanaBuyer(rpc, 1_000_000n);
    const response = await buyer.fetch(`${stack.service.url}${TICKER}`);
    expect(response.status).toBe(200);
    expect(await rpc.vm.tokenBalance(payTo.address)).toBe(2000n);
    expect(server.calls).toEqual(expect.arrayContaining(['POST /verify', 'POST /settle']));
  });

  it("does not sell on a facilitator's success the chain does not show: 502, nothing moved", async () => {
    const offer = paymentRequiredOf(await stack.service.get(TICKER)).accepts.find(
      (accepted) => accepted.network === SOLANA_DEVNET_CAIP2,
    )!;
    const buyer = (await solanaKeypair()).signer;
    await rpc.vm.setTokenBalance(buyer.address, 1_000_000n);
    const transaction = await handBuiltTransaction(rpc, buyer, offer);
    const before = await rpc.vm.tokenBalance(payTo.address);
    facilitator.lying = true;
    try {
      const response = await stack.service.get(TICKER, {
        headers: v2Header({ x402Version: 2, accepted: offer, payload: { transaction } }),
      });
      expect(response.status).toBe(502);
    } finally {
      facilitator.lying = false;
    }
    expect(await rpc.vm.tokenBalance(payTo.address)).toBe(before);
    expect(await rpc.vm.tokenBalance(buyer.address)).toBe(1_000_000n);
  });
});
