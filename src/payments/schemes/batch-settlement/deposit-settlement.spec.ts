import { InMemoryPendingSettlementStore } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { FacilitatorEvmSigner } from '@x402/evm';
import { decodeFunctionData, encodeFunctionResult, type Hex } from 'viem';
import { CHANNEL_STATE_ABI } from './deposit-abi.js';
import { settleVerifiedDeposit } from './deposit-settlement.js';
import type { ChannelChainState } from './deposit-verification.js';

const CHANNEL_ID = `0x${'c1'.repeat(32)}` as const;
const PAYER = '0x00000000000000000000000000000000000000a1';
const AUTHORIZATION_SIGNATURE = `0x${'ab'.repeat(64)}1b` as const;
const HASH = `0x${'77'.repeat(32)}` as const;

const requirements = {
  scheme: 'batch-settlement',
  network: 'eip155:84532',
  asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  amount: '1000',
  payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  maxTimeoutSeconds: 60,
  extra: {},
} as PaymentRequirements;

const payload = {
  x402Version: 2,
  accepted: requirements,
  payload: {
    type: 'deposit',
    channelConfig: {
      payer: PAYER,
      payerAuthorizer: '0x00000000000000000000000000000000000000a2',
      receiver: requirements.payTo,
      receiverAuthorizer: '0x00000000000000000000000000000000000000a3',
      token: requirements.asset,
      withdrawDelay: 900,
      salt: `0x${'00'.repeat(32)}`,
    },
    voucher: { channelId: CHANNEL_ID, maxClaimableAmount: '1000', signature: '0x' },
    deposit: {
      amount: '10000',
      authorization: {
        erc3009Authorization: {
          validAfter: '0',
          validBefore: '1900000000',
          salt: '7',
          signature: AUTHORIZATION_SIGNATURE,
        },
      },
    },
  },
} as unknown as PaymentPayload;

const BEFORE: ChannelChainState = {
  balance: 500n,
  totalClaimed: 200n,
  withdrawRequestedAt: 0,
  refundNonce: 3n,
  payerBalance: 10_000n,
};

/** A chain behind the signer: records what was sent, answers receipts and channel reads as told. */
class FakeChain {
  readonly sent: unknown[] = [];
  send: () => Promise<Hex> = () => Promise.resolve(HASH);
  receipt: () => Promise<{ status: string }> = () => Promise.resolve({ status: 'success' });
  /** The channel balances the successive reads show. */
  balances: bigint[] = [10_500n];
  reads = 0;

  signer(): FacilitatorEvmSigner {
    return {
      getAddresses: () => ['0x00000000000000000000000000000000000000f0'],
      writeContract: (args: unknown) => {
        this.sent.push(args);
        return this.send();
      },
      waitForTransactionReceipt: () => this.receipt(),
      readContract: (args: { functionName: string; args: readonly unknown[] }) => {
        if (args.functionName !== 'tryAggregate') throw new Error('unexpected read');
        this.reads += 1;
        const balance = this.balances[Math.min(this.reads, this.balances.length) - 1] ?? 0n;
        const calls = args.args[1] as readonly { callData: Hex }[];
        return Promise.resolve(
          calls.map(({ callData }) => {
            const { functionName } = decodeFunctionData({ abi: CHANNEL_STATE_ABI, data: callData });
            const result = {
              channels: [balance, 200n] as const,
              pendingWithdrawals: [0n, 0] as const,
              refundNonce: 3n,
              balanceOf: 0n,
            }[functionName];
            return {
              success: true,
              returnData: encodeFunctionResult({
                abi: CHANNEL_STATE_ABI,
                functionName,
                result,
              }),
            };
          }),
        );
      },
    } as unknown as FacilitatorEvmSigner;
  }
}

function settle(chain: FakeChain, pending = new InMemoryPendingSettlementStore()) {
  return settleVerifiedDeposit(chain.signer(), payload, requirements, BEFORE, pending, undefined);
}

describe('settleVerifiedDeposit', () => {
  it('sends the deposit, and answers with the channel state read once mined', async () => {
    const chain = new FakeChain();
    expect(await settle(chain)).toEqual({
      success: true,
      transaction: HASH,
      network: requirements.network,
      payer: PAYER,
      amount: '10000',
      extra: {
        channelState: {
          channelId: CHANNEL_ID,
          balance: '10500',
          totalClaimed: '200',
          withdrawRequestedAt: 0,
          refundNonce: '3',
        },
      },
    });
    expect(chain.sent).toHaveLength(1);
    expect(chain.sent[0]).toMatchObject({ functionName: 'deposit' });
  });

  it('reads the channel again while the RPC lags the receipt', async () => {
    const chain = new FakeChain();
    chain.balances = [500n, 500n, 10_500n];
    const settled = await settle(chain);
    expect(settled.extra).toMatchObject({ channelState: { balance: '10500' } });
    expect(chain.reads).toBe(3);
  });

  it('answers with the state it expects when the channel cannot be read after the receipt', async () => {
    const chain = new FakeChain();
    chain.signer = ((make) => () => ({
      ...make(),
      readContract: () => Promise.reject(new Error('down')),
    }))(chain.signer.bind(chain));
    const settled = await settle(chain);
    expect(settled).toMatchObject({
      success: true,
      extra: { channelState: { balance: '10500', totalClaimed: '200', refundNonce: '3' } },
    });
  });

  it('a send that fails: a failed deposit, no transaction, nothing pending', async () => {
    const chain = new FakeChain();
    chain.send = () => Promise.reject(new Error('nonce too low'));
    const pending = new InMemoryPendingSettlementStore();
    expect(await settle(chain, pending)).toEqual({
      success: false,
      errorReason: 'invalid_batch_settlement_evm_deposit_transaction_failed',
      errorMessage: 'nonce too low',
      transaction: '',
      network: requirements.network,
      payer: PAYER,
    });
    expect(await pending.get(AUTHORIZATION_SIGNATURE)).toBeUndefined();
  });

  it('a receipt that does not come: settlement pending, the transaction kept for the retry', async () => {
    const chain = new FakeChain();
    chain.receipt = () => Promise.reject(new Error('receipt timeout'));
    const pending = new InMemoryPendingSettlementStore();
    expect(await settle(chain, pending)).toMatchObject({
      success: false,
      errorReason: 'settlement_pending',
      transaction: HASH,
    });
    expect(await pending.get(AUTHORIZATION_SIGNATURE)).toBe(HASH);
  });

  it('a reverted transaction: a failed deposit naming it', async () => {
    const chain = new FakeChain();
    chain.receipt = () => Promise.resolve({ status: 'reverted' });
    expect(await settle(chain)).toEqual({
      success: false,
      errorReason: 'invalid_batch_settlement_evm_deposit_transaction_failed',
      transaction: HASH,
      network: requirements.network,
      payer: PAYER,
    });
  });
});
