import { authorizationTypes } from '@x402/evm';
/**
 * The contract functions and EIP-712 type a deposit is checked with (deposit-verification.ts):
 * the batch-settlement channel contract's, USDC's and Multicall3's, as deployed.
 */

/** Multicall3, at the same address on every EVM chain. */
export const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11';

export const MULTICALL3_ABI = [
  {
    type: 'function',
    name: 'tryAggregate',
    stateMutability: 'payable',
    inputs: [
      { name: 'requireSuccess', type: 'bool' },
      {
        name: 'calls',
        type: 'tuple[]',
        components: [
          { name: 'target', type: 'address' },
          { name: 'callData', type: 'bytes' },
        ],
      },
    ],
    outputs: [
      {
        name: 'returnData',
        type: 'tuple[]',
        components: [
          { name: 'success', type: 'bool' },
          { name: 'returnData', type: 'bytes' },
        ],
      },
    ],
  },
] as const;

/** The channel's views a deposit's verdict and the channel record are built from. */
export const CHANNEL_STATE_ABI = [
  {
    type: 'function',
    name: 'channels',
    stateMutability: 'view',
    inputs: [{ name: 'channelId', type: 'bytes32' }],
    outputs: [
      { name: 'balance', type: 'uint128' },
      { name: 'totalClaimed', type: 'uint128' },
    ],
  },
  {
    type: 'function',
    name: 'pendingWithdrawals',
    stateMutability: 'view',
    inputs: [{ name: 'channelId', type: 'bytes32' }],
    outputs: [
      { name: 'amount', type: 'uint128' },
      { name: 'initiatedAt', type: 'uint40' },
    ],
  },
  {
    type: 'function',
    name: 'refundNonce',
    stateMutability: 'view',
    inputs: [{ name: 'channelId', type: 'bytes32' }],
    outputs: [{ name: '', type: 'uint256' }],
  },
  {
    type: 'function',
    name: 'balanceOf',
    stateMutability: 'view',
    inputs: [{ name: 'account', type: 'address' }],
    outputs: [{ name: '', type: 'uint256' }],
  },
] as const;

/** The channel contract's deposit, simulated from the settling account before it is sent. */
export const DEPOSIT_ABI = [
  {
    type: 'function',
    name: 'deposit',
    stateMutability: 'nonpayable',
    inputs: [
      {
        name: 'config',
        type: 'tuple',
        components: [
          { name: 'payer', type: 'address' },
          { name: 'payerAuthorizer', type: 'address' },
          { name: 'receiver', type: 'address' },
          { name: 'receiverAuthorizer', type: 'address' },
          { name: 'token', type: 'address' },
          { name: 'withdrawDelay', type: 'uint40' },
          { name: 'salt', type: 'bytes32' },
        ],
      },
      { name: 'amount', type: 'uint128' },
      { name: 'collector', type: 'address' },
      { name: 'collectorData', type: 'bytes' },
    ],
    outputs: [],
  },
] as const;

/**
 * EIP-3009's ReceiveWithAuthorization, which the deposit collector redeems: the same fields as
 * the TransferWithAuthorization `exact` signs (the SDK's `authorizationTypes`), another type name.
 */
export const RECEIVE_WITH_AUTHORIZATION_TYPES = {
  ReceiveWithAuthorization: authorizationTypes.TransferWithAuthorization,
} as const;
