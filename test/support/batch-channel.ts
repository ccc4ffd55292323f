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

/** The channel contract's ChannelConfig tuple. */
export const CHANNEL_CONFIG_COMPONENTS = [
  { name: 'payer', type: 'address' },
  { name: 'payerAuthorizer', type: 'address' },
  { name: 'receiver', type: 'address' },
  { name: 'receiverAuthorizer', type: 'address' },
  { name: 'token', type: 'address' },
  { name: 'withdrawDelay', type: 'uint40' },
  { name: 'salt', type: 'bytes32' },
] as const;

/** The payer's timed withdrawal. */
export const WITHDRAW_ABI = [
  {
    type: 'function',
    name: 'initiateWithdraw',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'config', type: 'tuple', components: CHANNEL_CONFIG_COMPONENTS },
      { name: 'amount', type: 'uint128' },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'finalizeWithdraw',
    stateMutability: 'nonpayable',
    inputs: [{ name: 'config', type: 'tuple', components: CHANNEL_CONFIG_COMPONENTS }],
    outputs: [],
  },
] as const;
