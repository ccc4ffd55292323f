import { jest } from '@jest/globals';
import {
  TransactionReceiptNotFoundError,
  WaitForTransactionReceiptTimeoutError,
  type TransactionReceipt,
} from 'viem';
import { ReceiptPacing, pollReceipt } from './receipt-wait.js';

const HASH = `0x${'ab'.repeat(32)}` as const;
const RECEIPT = { transactionHash: HASH } as TransactionReceipt;
const notMined = (): Promise<TransactionReceipt> =>
  Promise.reject(new TransactionReceiptNotFoundError({ hash: HASH }));

/** Lets the background block-time measurement land. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('ReceiptPacing', () => {
  it('starts at a few milliseconds and doubles up to a quarter of the block time', async () => {
    const pacing = new ReceiptPacing(() => Promise.resolve(2000));
    await settle();
    expect([0, 1, 2, 3, 6, 7, 8, 20].map((n) => pacing.waitAfter(n))).toEqual([
      5, 10, 20, 40, 320, 500, 500, 500,
    ]);
  });

  it('on a chain that mines at once, keeps asking every few milliseconds', async () => {
    const pacing = new ReceiptPacing(() => Promise.resolve(0));
    await settle();
    expect(pacing.waitAfter(10)).toBe(5);
  });

  it('never waits more than 2 s between asks, however slow the chain', async () => {
    const pacing = new ReceiptPacing(() => Promise.resolve(60_000));
    await settle();
    expect(pacing.waitAfter(30)).toBe(2000);
  });

  it('a configured longest wait wins, and the chain is not asked', () => {
    const readBlockTime = jest.fn(() => Promise.resolve(2000));
    const pacing = new ReceiptPacing(readBlockTime, 20);
    expect(pacing.waitAfter(10)).toBe(20);
    expect(readBlockTime).not.toHaveBeenCalled();
  });

  it('while the block time is unknown (or cannot be read) waits grow to 250 ms and it is read again', async () => {
    const readBlockTime = jest.fn(() => Promise.reject(new Error('rpc down')));
    const pacing = new ReceiptPacing(readBlockTime);
    await settle();
    expect(pacing.waitAfter(10)).toBe(250);
    await settle();
    expect(readBlockTime).toHaveBeenCalledTimes(2);
  });
});

describe('pollReceipt', () => {
  it('asks at once, then after each wait, until the receipt exists', async () => {
    const getReceipt = jest
      .fn<(hash: `0x${string}`) => Promise<TransactionReceipt>>()
      .mockImplementationOnce(notMined)
      .mockImplementationOnce(notMined)
      .mockResolvedValue(RECEIPT);
    const waits: number[] = [];
    const receipt = await pollReceipt(
      getReceipt,
      HASH,
      (attempt) => {
        waits.push(attempt);
        return 1;
      },
      1000,
    );
    expect(receipt).toBe(RECEIPT);
    expect(getReceipt).toHaveBeenCalledTimes(3);
    expect(waits).toEqual([0, 1]);
  });

  it('gives up at the time-out with the last real error, or a time-out error', async () => {
    const down = new Error('rpc down');
    await expect(
      pollReceipt(
        () => Promise.reject(down),
        HASH,
        () => 5,
        30,
      ),
    ).rejects.toBe(down);
    await expect(pollReceipt(notMined, HASH, () => 5, 30)).rejects.toBeInstanceOf(
      WaitForTransactionReceiptTimeoutError,
    );
  });
});
