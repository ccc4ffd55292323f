/**
 * The project's batch-settlement channel contract and EIP-3009 deposit collector
 * (contracts/BatchSettlement.sol, contracts/Erc3009DepositCollector.sol), driven by the x402 SDK's
 * own facilitator scheme and client helpers on a local anvil chain: whatever the SDK computes
 * (channel ids, voucher, claim-batch and refund digests, collector data) the contract must accept,
 * and every token movement is checked on chain.
 */
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import {
  buildChannelConfig,
  computeChannelId,
  createBatchSettlementEIP3009DepositPayload,
  InMemoryClientChannelStorage,
  signVoucher,
} from '@x402/evm/batch-settlement/client';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/facilitator';
import {
  createWalletClient,
  getAddress,
  http,
  publicActions,
  type Address,
  type Hex,
  type PrivateKeyAccount,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startLocalChain, type LocalChain } from './support/chain.js';
import {
  CHANNEL_VIEWS_ABI,
  WITHDRAW_ABI as withdrawAbi,
  channelOnChain,
} from './support/batch-channel.js';

const NETWORK = 'eip155:84532';
const PRICE = 1_000n;
const DEPOSIT = 100_000n;
const ZERO_SALT: Hex = `0x${'00'.repeat(32)}`;

const collectorAbi = [
  {
    type: 'function',
    name: 'collect',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'payer', type: 'address' },
      { name: 'token', type: 'address' },
      { name: 'amount', type: 'uint256' },
      { name: 'channelId', type: 'bytes32' },
      { name: 'data', type: 'bytes' },
    ],
    outputs: [],
  },
] as const;

interface ChannelConfig {
  payer: Address;
  payerAuthorizer: Address;
  receiver: Address;
  receiverAuthorizer: Address;
  token: Address;
  withdrawDelay: number;
  salt: Hex;
}

describe('batch-settlement contracts on the local chain, through the SDK facilitator', () => {
  let chain: LocalChain;
  let facilitator: BatchSettlementEvmScheme;
  let receiver: Address;
  let receiverAuthorizer: PrivateKeyAccount;
  let requirements: PaymentRequirements;

  function walletFor(key: Hex) {
    return createWalletClient({
      account: privateKeyToAccount(key),
      chain: chain.publicClient.chain,
      transport: http(chain.rpcUrl),
      pollingInterval: 10,
    }).extend(publicActions);
  }

  async function channelState(channelId: Hex): Promise<{ balance: bigint; totalClaimed: bigint }> {
    return channelOnChain(chain, channelId);
  }

  async function receiverTotals(): Promise<{ claimed: bigint; settled: bigint }> {
    const [claimed, settled] = await chain.publicClient.readContract({
      address: chain.batchSettlementAddress,
      abi: CHANNEL_VIEWS_ABI,
      functionName: 'receivers',
      args: [receiver, chain.usdcAddress],
    });
    return { claimed, settled };
  }

  function envelope(payload: Record<string, unknown>): PaymentPayload {
    return { x402Version: 2, accepted: requirements, payload };
  }

  /** A payer with `funds` test USDC and a channel config for the route's requirements. */
  async function newPayer(
    key: Hex,
    funds: bigint,
    salt: Hex = ZERO_SALT,
  ): Promise<{ account: PrivateKeyAccount; config: ChannelConfig; channelId: Hex }> {
    const account = privateKeyToAccount(key);
    await chain.mintUsdc(account.address, funds);
    const config = buildChannelConfig(
      { signer: account, salt, storage: new InMemoryClientChannelStorage() },
      requirements,
    );
    return { account, config, channelId: computeChannelId(config, NETWORK) };
  }

  async function deposit(
    account: PrivateKeyAccount,
    config: ChannelConfig,
    amount: bigint,
    firstVoucher: bigint,
  ): Promise<void> {
    const result = await createBatchSettlementEIP3009DepositPayload(
      account,
      2,
      requirements,
      config,
      amount.toString(),
      firstVoucher.toString(),
    );
    const payment = envelope(result.payload);
    const verified = await facilitator.verify(payment, requirements);
    expect(verified).toMatchObject({ isValid: true, payer: account.address });
    const settled = await facilitator.settle(payment, requirements);
    expect(settled).toMatchObject({ success: true, amount: amount.toString() });
  }

  async function claim(
    config: ChannelConfig,
    account: PrivateKeyAccount,
    cumulative: bigint,
  ): Promise<{ success: boolean; errorReason?: string }> {
    const voucher = await signVoucher(
      account,
      computeChannelId(config, NETWORK),
      cumulative.toString(),
      NETWORK,
    );
    return facilitator.settle(
      envelope({
        type: 'claim',
        claims: [
          {
            voucher: { channel: config, maxClaimableAmount: cumulative.toString() },
            signature: voucher.signature,
            totalClaimed: cumulative.toString(),
          },
        ],
      }),
      requirements,
    );
  }

  beforeAll(async () => {
    chain = await startLocalChain();
    const [facilitatorKey, receiverKey, authorizerKey] = chain.accounts;
    if (facilitatorKey === undefined || receiverKey === undefined || authorizerKey === undefined) {
      throw new Error('anvil dev keys missing');
    }
    receiver = privateKeyToAccount(receiverKey).address;
    receiverAuthorizer = privateKeyToAccount(authorizerKey);
    const client = walletFor(facilitatorKey);
    const signer = toFacilitatorEvmSigner({
      address: client.account.address,
      readContract: (args) => client.readContract(args),
      verifyTypedData: (args) =>
        client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
      writeContract: (args) => client.writeContract(args),
      sendTransaction: (args) => client.sendTransaction(args),
      waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
      getCode: (args) => client.getCode(args),
    });
    facilitator = new BatchSettlementEvmScheme(signer, receiverAuthorizer);
    requirements = {
      scheme: 'batch-settlement',
      network: NETWORK,
      amount: PRICE.toString(),
      asset: chain.usdcAddress,
      payTo: receiver,
      maxTimeoutSeconds: 3600,
      extra: {
        receiverAuthorizer: receiverAuthorizer.address,
        withdrawDelay: 900,
        name: 'USDC',
        version: '2',
      },
    };
  });

  afterAll(async () => {
    await chain.stop();
  });

  it('deposits through the collector, claims N vouchers in one transaction, settles exactly N x price to the receiver and refunds the rest', async () => {
    const payerKey = chain.accounts[3] as Hex;
    const { account, config, channelId } = await newPayer(payerKey, 1_000_000n);
    const payerBefore = await chain.usdcBalance(account.address);
    const receiverBefore = await chain.usdcBalance(receiver);

    await deposit(account, config, DEPOSIT, PRICE);
    expect(await chain.usdcBalance(account.address)).toBe(payerBefore - DEPOSIT);
    expect(await chain.usdcBalance(chain.batchSettlementAddress)).toBe(DEPOSIT);
    expect(await chain.usdcBalance(chain.erc3009DepositCollectorAddress)).toBe(0n);
    expect(await channelState(channelId)).toEqual({ balance: DEPOSIT, totalClaimed: 0n });

    // seven paid calls: the seventh cumulative voucher is verified, then claimed once
    const calls = 7n;
    const latest = await signVoucher(account, channelId, (calls * PRICE).toString(), NETWORK);
    const verified = await facilitator.verify(
      envelope({ type: 'voucher', channelConfig: config, voucher: latest }),
      requirements,
    );
    expect(verified).toMatchObject({ isValid: true, payer: account.address });

    const claimed = await claim(config, account, calls * PRICE);
    expect(claimed).toMatchObject({ success: true });
    expect(await channelState(channelId)).toEqual({
      balance: DEPOSIT,
      totalClaimed: calls * PRICE,
    });
    expect(await receiverTotals()).toEqual({ claimed: calls * PRICE, settled: 0n });
    expect(await chain.usdcBalance(receiver)).toBe(receiverBefore);

    const settled = await facilitator.settle(
      envelope({ type: 'settle', receiver, token: chain.usdcAddress }),
      requirements,
    );
    expect(settled).toMatchObject({ success: true });
    expect(await chain.usdcBalance(receiver)).toBe(receiverBefore + calls * PRICE);
    expect(await receiverTotals()).toEqual({ claimed: calls * PRICE, settled: calls * PRICE });

    // the unclaimed remainder goes back to the payer on a receiver-authorizer refund
    const refundVoucher = await signVoucher(
      account,
      channelId,
      (calls * PRICE).toString(),
      NETWORK,
    );
    const refunded = await facilitator.settle(
      envelope({
        type: 'refund',
        channelConfig: config,
        voucher: refundVoucher,
        amount: (DEPOSIT - calls * PRICE).toString(),
        refundNonce: '0',
        claims: [],
      }),
      requirements,
    );
    expect(refunded).toMatchObject({ success: true, amount: (DEPOSIT - calls * PRICE).toString() });
    expect(await chain.usdcBalance(account.address)).toBe(payerBefore - calls * PRICE);
    expect(await channelState(channelId)).toEqual({
      balance: calls * PRICE,
      totalClaimed: calls * PRICE,
    });
    expect(await chain.usdcBalance(chain.batchSettlementAddress)).toBe(0n);
  });

  it('refuses vouchers over the deposit, signed by another key, for another channel, or at or below what was claimed', async () => {
    const { account, config, channelId } = await newPayer(chain.accounts[4] as Hex, 1_000_000n);
    await deposit(account, config, 10n * PRICE, PRICE);
    const voucherPayment = (voucher: object, channelConfig: ChannelConfig = config) =>
      envelope({ type: 'voucher', channelConfig, voucher });

    const over = await signVoucher(account, channelId, (11n * PRICE).toString(), NETWORK);
    expect(await facilitator.verify(voucherPayment(over), requirements)).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_batch_settlement_evm_cumulative_exceeds_balance',
    });

    const stranger = privateKeyToAccount(chain.accounts[5] as Hex);
    const forged = await signVoucher(stranger, channelId, PRICE.toString(), NETWORK);
    expect(await facilitator.verify(voucherPayment(forged), requirements)).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_batch_settlement_evm_voucher_signature',
    });

    const otherConfig: ChannelConfig = { ...config, salt: `0x${'11'.repeat(32)}` };
    const forOther = await signVoucher(
      account,
      computeChannelId(otherConfig, NETWORK),
      PRICE.toString(),
      NETWORK,
    );
    expect(await facilitator.verify(voucherPayment(forOther), requirements)).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_batch_settlement_evm_channel_id_mismatch',
    });

    expect(await claim(config, account, 3n * PRICE)).toMatchObject({ success: true });
    const stale = await signVoucher(account, channelId, (3n * PRICE).toString(), NETWORK);
    expect(await facilitator.verify(voucherPayment(stale), requirements)).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_batch_settlement_evm_cumulative_below_claimed',
    });

    // on chain: a replayed lower claim changes nothing, a claim above the balance reverts
    expect(await claim(config, account, 2n * PRICE)).toMatchObject({ success: true });
    expect(await channelState(channelId)).toEqual({
      balance: 10n * PRICE,
      totalClaimed: 3n * PRICE,
    });
    expect(await claim(config, account, 11n * PRICE)).toMatchObject({ success: false });
    expect((await channelState(channelId)).totalClaimed).toBe(3n * PRICE);
  });

  it('lets only the channel contract use a deposit authorization', async () => {
    const { account, config, channelId } = await newPayer(chain.accounts[6] as Hex, 50_000n);
    const result = await createBatchSettlementEIP3009DepositPayload(
      account,
      2,
      requirements,
      config,
      '50000',
      PRICE.toString(),
    );
    const auth = (
      result.payload as {
        deposit: {
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
    ).deposit.authorization.erc3009Authorization;
    const { encodeAbiParameters } = await import('viem');
    const data = encodeAbiParameters(
      [{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }],
      [BigInt(auth.validAfter), BigInt(auth.validBefore), BigInt(auth.salt), auth.signature],
    );
    const thief = walletFor(chain.accounts[7] as Hex);
    await expect(
      thief.simulateContract({
        address: chain.erc3009DepositCollectorAddress,
        abi: collectorAbi,
        functionName: 'collect',
        args: [account.address, chain.usdcAddress, 50_000n, channelId, data],
      }),
    ).rejects.toThrow(/caller is not the channel contract/);
    expect(await chain.usdcBalance(account.address)).toBe(50_000n);
  });

  it('lets a payer withdraw unclaimed escrow only after the delay, and the receiver claim meanwhile', async () => {
    const payerKey = chain.accounts[8] as Hex;
    const { account, config, channelId } = await newPayer(payerKey, 20_000n);
    await deposit(account, config, 20_000n, PRICE);
    const payer = walletFor(payerKey);
    const mined = async (hash: Hex): Promise<void> => {
      expect((await payer.waitForTransactionReceipt({ hash })).status).toBe('success');
    };
    const finalize = async (): Promise<void> => {
      const { request } = await payer.simulateContract({
        address: chain.batchSettlementAddress,
        abi: withdrawAbi,
        functionName: 'finalizeWithdraw',
        args: [config],
      });
      await mined(await payer.writeContract(request));
    };

    const { request: initiate } = await payer.simulateContract({
      address: chain.batchSettlementAddress,
      abi: withdrawAbi,
      functionName: 'initiateWithdraw',
      args: [config, 15_000n],
    });
    await mined(await payer.writeContract(initiate));
    await expect(finalize()).rejects.toThrow(/withdraw delay has not passed/);
    // the receiver claims 8 calls during the grace period
    expect(await claim(config, account, 8n * PRICE)).toMatchObject({ success: true });
    await chain.publicClient.request({
      method: 'evm_increaseTime' as never,
      params: [901] as never,
    });
    await chain.publicClient.request({ method: 'evm_mine' as never, params: [] as never });
    await finalize();
    // capped to what is still unclaimed: 20,000 - 8,000
    expect(await chain.usdcBalance(account.address)).toBe(12_000n);
    expect(await channelState(channelId)).toEqual({ balance: 8_000n, totalClaimed: 8_000n });
    expect(getAddress(config.payer)).toBe(account.address);
  });
});
