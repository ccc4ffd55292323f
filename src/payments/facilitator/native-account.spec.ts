import { parseGwei, type TransactionSerializable } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { nativeSigningAccount } from './native-account.js';

describe('the settlement key signing with libsecp256k1', () => {
  const key = generatePrivateKey();
  const viemAccount = privateKeyToAccount(key);
  const native = nativeSigningAccount(key);

  it('is the same account', () => {
    expect(native.address).toBe(viemAccount.address);
    expect(native.publicKey).toBe(viemAccount.publicKey);
  });

  it("signs transactions with exactly viem's bytes", async () => {
    const transactions: TransactionSerializable[] = [
      {
        chainId: 84532,
        type: 'eip1559',
        nonce: 7,
        to: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
        data: '0xe3ee160e00',
        gas: 90_000n,
        maxFeePerGas: parseGwei('0.2'),
        maxPriorityFeePerGas: parseGwei('0.001'),
      },
      {
        chainId: 31337,
        type: 'legacy',
        nonce: 0,
        to: viemAccount.address,
        gasPrice: 1n,
        gas: 21_000n,
        value: 5n,
      },
    ];
    for (const transaction of transactions) {
      expect(await native.signTransaction(transaction)).toBe(
        await viemAccount.signTransaction(transaction),
      );
    }
  });

  it("signs hashes and EIP-712 data with exactly viem's bytes", async () => {
    const hash = `0x${'9c'.repeat(32)}` as const;
    expect(await native.sign({ hash })).toBe(await viemAccount.sign({ hash }));
    const typedData = {
      domain: { name: 'x402 Batch Settlement', version: '1', chainId: 84532n },
      types: {
        Voucher: [
          { name: 'channelId', type: 'bytes32' },
          { name: 'maxClaimableAmount', type: 'uint128' },
        ],
      },
      primaryType: 'Voucher',
      message: { channelId: hash, maxClaimableAmount: 4000n },
    } as const;
    expect(await native.signTypedData(typedData)).toBe(await viemAccount.signTypedData(typedData));
  });
});
