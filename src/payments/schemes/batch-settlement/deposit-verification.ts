import type { PaymentPayload, PaymentRequirements, VerifyResponse } from '@x402/core/types';
import {
  BATCH_SETTLEMENT_ADDRESS,
  BATCH_SETTLEMENT_SCHEME,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  isBatchSettlementDepositPayload,
  type BatchSettlementDepositPayload,
  type FacilitatorEvmSigner,
} from '@x402/evm';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import {
  decodeFunctionResult,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  keccak256,
  type Hex,
} from 'viem';
import { typedDataSigner } from '../../../chain/ecdsa.js';
import { chainIdOf } from './voucher-rules.js';
import { voucherSigner } from './voucher-signature.js';
import {
  CHANNEL_STATE_ABI,
  DEPOSIT_ABI,
  MULTICALL3,
  MULTICALL3_ABI,
  RECEIVE_WITH_AUTHORIZATION_TYPES,
} from './deposit-abi.js';

/** The channel contract's bounds on a channel's withdraw delay (seconds). */
const MIN_WITHDRAW_DELAY = 900;
const MAX_WITHDRAW_DELAY = 2_592_000;
/** The SDK refuses an authorization that expires within this many seconds. */
const VALID_BEFORE_MARGIN_S = 6n;
/** A 65-byte signature; anything longer (ERC-6492 wrapped, a contract wallet's) is the SDK's. */
const PLAIN_SIGNATURE_LENGTH = 2 + 130;

/**
 * A batch-settlement deposit proven valid the cheap way, or undefined when it is not proven and
 * the SDK's own verification must decide (and name the reason). The same checks as the SDK's
 * facilitator, for the deposit this service accepts (EIP-3009, a payer authorizer key; see
 * acceptBatchPayment), with three differences:
 *
 * - both signatures (the ReceiveWithAuthorization and the voucher) are recovered natively
 *   (typedDataSigner, voucherSigner: ~130 µs each with the EIP-712 hashing, where viem's pure-JS
 *   recovery takes ~1.3 ms);
 * - the payer's code is not read: a deposit authorization that recovers to the payer was signed
 *   by the payer's key, and whether the token takes it (a payer with code is checked through
 *   ERC-1271 by USDC) is what the deposit's simulation below answers;
 * - the channel state and the simulation are asked together.
 *
 * What is read per deposit, and why it is never cached: the channel's on-chain balance and
 * claimed total, its pending withdrawal and refund nonce (the channel record is built from
 * them, and a withdrawal started on chain refuses the deposit's voucher), the payer's token
 * balance, and the deposit simulated from the settling account (it fails for a used EIP-3009
 * nonce, `authorizationState`, an expired window or a token that refuses the signature). The
 * contracts' addresses, the EIP-712 domains and the type hashes are constants.
 */
export async function verifyDepositNatively(
  signer: FacilitatorEvmSigner,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): Promise<VerifyResponse | undefined> {
  const state = await provenDeposit(signer, payload, requirements);
  if (state === undefined) return undefined;
  const { channelConfig, voucher } = payload.payload as unknown as BatchSettlementDepositPayload;
  return {
    isValid: true,
    payer: channelConfig.payer,
    extra: {
      channelId: voucher.channelId,
      balance: state.balance.toString(),
      totalClaimed: state.totalClaimed.toString(),
      withdrawRequestedAt: state.withdrawRequestedAt,
      refundNonce: state.refundNonce.toString(),
    },
  };
}

/**
 * The channel's state on chain before a deposit verifyDepositNatively proves valid; else
 * undefined (a field that does not parse included: the SDK names what is wrong with it).
 */
export async function provenDeposit(
  signer: FacilitatorEvmSigner,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): Promise<ChannelChainState | undefined> {
  try {
    return await proveDeposit(signer, payload, requirements);
  } catch {
    return undefined;
  }
}

async function proveDeposit(
  signer: FacilitatorEvmSigner,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): Promise<ChannelChainState | undefined> {
  const raw = payload.payload;
  if (!isBatchSettlementDepositPayload(raw)) return undefined;
  const { channelConfig: config, voucher, deposit } = raw;
  const authorization = deposit.authorization.erc3009Authorization;
  const extra = requirements.extra;
  if (
    authorization === undefined ||
    'permit2Authorization' in deposit.authorization ||
    payload.accepted.scheme !== BATCH_SETTLEMENT_SCHEME ||
    requirements.scheme !== BATCH_SETTLEMENT_SCHEME ||
    payload.accepted.network !== requirements.network ||
    (extra['assetTransferMethod'] !== undefined && extra['assetTransferMethod'] !== 'eip3009') ||
    typeof extra['name'] !== 'string' ||
    typeof extra['version'] !== 'string' ||
    authorization.signature.length !== PLAIN_SIGNATURE_LENGTH ||
    !configOffered(config, voucher.channelId, requirements)
  ) {
    return undefined;
  }
  const now = BigInt(Math.floor(Date.now() / 1000));
  const validAfter = BigInt(authorization.validAfter);
  const validBefore = BigInt(authorization.validBefore);
  if (validBefore < now + VALID_BEFORE_MARGIN_S || validAfter > now) return undefined;
  const chainId = chainIdOf(requirements.network);
  const amount = BigInt(deposit.amount);
  const payer = getAddress(config.payer);
  const authorizedBy = typedDataSigner(
    {
      domain: {
        name: extra['name'],
        version: extra['version'],
        chainId,
        verifyingContract: getAddress(requirements.asset),
      },
      types: RECEIVE_WITH_AUTHORIZATION_TYPES,
      primaryType: 'ReceiveWithAuthorization',
      message: {
        from: payer,
        to: ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
        value: amount,
        validAfter,
        validBefore,
        nonce: keccak256(
          encodeAbiParameters(
            [{ type: 'bytes32' }, { type: 'uint256' }],
            [voucher.channelId, BigInt(authorization.salt)],
          ),
        ),
      },
    },
    authorization.signature,
  );
  if (authorizedBy !== payer.toLowerCase()) return undefined;
  const maxClaimable = BigInt(voucher.maxClaimableAmount);
  const voucherBy = voucherSigner(voucher.channelId, maxClaimable, chainId, voucher.signature);
  if (voucherBy !== config.payerAuthorizer.toLowerCase()) return undefined;

  const [state, simulated] = await Promise.all([
    channelState(signer, voucher.channelId, requirements.asset, payer).catch(() => undefined),
    signer
      .readContract({
        address: BATCH_SETTLEMENT_ADDRESS,
        abi: DEPOSIT_ABI,
        functionName: 'deposit',
        args: depositArgs(raw),
      })
      .then(
        () => true,
        () => false,
      ),
  ]);
  if (
    state === undefined ||
    !simulated ||
    state.payerBalance < amount ||
    maxClaimable > state.balance + amount ||
    maxClaimable <= state.totalClaimed
  ) {
    return undefined;
  }
  return state;
}

/** The channel contract's `deposit` arguments for an EIP-3009 deposit payload. */
export function depositArgs(raw: BatchSettlementDepositPayload) {
  const { channelConfig: config, deposit } = raw;
  const authorization = deposit.authorization.erc3009Authorization;
  if (authorization === undefined) throw new Error('not an EIP-3009 deposit');
  const collectorData = encodeAbiParameters(
    [{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }],
    [
      BigInt(authorization.validAfter),
      BigInt(authorization.validBefore),
      BigInt(authorization.salt),
      authorization.signature,
    ],
  );
  return [
    {
      payer: getAddress(config.payer),
      payerAuthorizer: getAddress(config.payerAuthorizer),
      receiver: getAddress(config.receiver),
      receiverAuthorizer: getAddress(config.receiverAuthorizer),
      token: getAddress(config.token),
      withdrawDelay: config.withdrawDelay,
      salt: config.salt,
    },
    BigInt(deposit.amount),
    ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
    collectorData,
  ] as const;
}

/** The SDK's channel-config rules: the id is the config's hash and the config is the offer's. */
function configOffered(
  config: {
    receiver: string;
    receiverAuthorizer: string;
    token: string;
    withdrawDelay: number;
  } & Parameters<typeof computeChannelId>[0],
  channelId: string,
  requirements: PaymentRequirements,
): boolean {
  const receiverAuthorizer = requirements.extra['receiverAuthorizer'];
  const withdrawDelay = requirements.extra['withdrawDelay'];
  return (
    computeChannelId(config, requirements.network).toLowerCase() === channelId.toLowerCase() &&
    config.receiver.toLowerCase() === requirements.payTo.toLowerCase() &&
    typeof receiverAuthorizer === 'string' &&
    BigInt(receiverAuthorizer) !== 0n &&
    config.receiverAuthorizer.toLowerCase() === receiverAuthorizer.toLowerCase() &&
    config.token.toLowerCase() === requirements.asset.toLowerCase() &&
    (withdrawDelay === undefined || config.withdrawDelay === Number(withdrawDelay)) &&
    config.withdrawDelay >= MIN_WITHDRAW_DELAY &&
    config.withdrawDelay <= MAX_WITHDRAW_DELAY
  );
}

export interface ChannelChainState {
  readonly balance: bigint;
  readonly totalClaimed: bigint;
  readonly withdrawRequestedAt: number;
  readonly refundNonce: bigint;
  readonly payerBalance: bigint;
}

/** The channel's state on chain and the payer's token balance, in one `eth_call` (Multicall3). */
export async function channelState(
  signer: FacilitatorEvmSigner,
  channelId: Hex,
  token: string,
  payer: Hex,
): Promise<ChannelChainState | undefined> {
  const calls = [
    { target: BATCH_SETTLEMENT_ADDRESS, functionName: 'channels', args: [channelId] },
    { target: BATCH_SETTLEMENT_ADDRESS, functionName: 'pendingWithdrawals', args: [channelId] },
    { target: BATCH_SETTLEMENT_ADDRESS, functionName: 'refundNonce', args: [channelId] },
    { target: getAddress(token), functionName: 'balanceOf', args: [payer] },
  ] as const;
  const results = (await signer.readContract({
    address: MULTICALL3,
    abi: MULTICALL3_ABI,
    functionName: 'tryAggregate',
    args: [
      false,
      calls.map(({ target, functionName, args }) => ({
        target,
        callData: encodeFunctionData({ abi: CHANNEL_STATE_ABI, functionName, args }),
      })),
    ],
  })) as readonly { success: boolean; returnData: Hex }[];
  if (results.length !== calls.length || results.some(({ success }) => !success)) return undefined;
  const decoded = calls.map(({ functionName }, index) =>
    decodeFunctionResult({
      abi: CHANNEL_STATE_ABI,
      functionName,
      data: results[index]?.returnData ?? '0x',
    }),
  ) as unknown as [readonly [bigint, bigint], readonly [bigint, number], bigint, bigint];
  const [[balance, totalClaimed], [, withdrawRequestedAt], refundNonce, payerBalance] = decoded;
  return { balance, totalClaimed, withdrawRequestedAt, refundNonce, payerBalance };
}
