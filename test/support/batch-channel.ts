/** The batch-settlement channel contract's views the tests read balances and totals from. */
export const CHANNEL_VIEWS_ABI = [
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
    name: 'receivers',
    stateMutability: 'view',
    inputs: [
      { name: 'receiver', type: 'address' },
      { name: 'token', type: 'address' },
    ],
    outputs: [
      { name: 'totalClaimed', type: 'uint128' },
      { name: 'totalSettled', type: 'uint128' },
    ],
  },
  {
    type: 'function',
    name: 'refundNonce',
    stateMutability: 'view',
    inputs: [{ name: 'channelId', type: 'bytes32' }],
    outputs: [{ name: '', type: 'uint256' }],
  },
] as const;
