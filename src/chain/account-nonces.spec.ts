import { AccountNonces } from './account-nonces.js';

/** A chain whose pending count the test sets, counting how often it was read. */
function chain(pending: number): {
  nonces: AccountNonces;
  reads: () => number;
  set(n: number): void;
} {
  let count = pending;
  let reads = 0;
  return {
    nonces: new AccountNonces(() => {
      reads += 1;
      return Promise.resolve(count);
    }),
    reads: () => reads,
    set: (n) => {
      count = n;
    },
  };
}

describe('AccountNonces', () => {
  it('reads the chain once and counts on from there', async () => {
    const { nonces, reads } = chain(7);
    expect([await nonces.take(), await nonces.take(), await nonces.take()]).toEqual([7, 8, 9]);
    expect(reads()).toBe(1);
  });

  it('gives concurrent senders consecutive nonces from one read', async () => {
    const { nonces, reads } = chain(3);
    const taken = await Promise.all([nonces.take(), nonces.take(), nonces.take()]);
    expect(taken).toEqual([3, 4, 5]);
    expect(reads()).toBe(1);
  });

  it('after a send that failed, reads the chain again and hands the unused nonce out again', async () => {
    const { nonces, reads, set } = chain(10);
    expect(await nonces.sending((take) => take())).toBe(10);
    set(11);
    await expect(
      nonces.sending(async (take) => {
        await take();
        throw new Error('nonce too low');
      }),
    ).rejects.toThrow('nonce too low');
    // the chain has only the first transaction: 11 is free again
    expect(await nonces.take()).toBe(11);
    expect(reads()).toBe(2);
  });

  it('after a failure before any nonce was taken, keeps counting', async () => {
    const { nonces, reads } = chain(0);
    await nonces.take();
    await expect(
      nonces.sending(() => Promise.reject(new Error('execution reverted'))),
    ).rejects.toThrow('execution reverted');
    expect(await nonces.take()).toBe(1);
    expect(reads()).toBe(1);
  });

  it('skips nonces another sender used once told to forget (the lease changed hands)', async () => {
    const { nonces, set } = chain(4);
    expect(await nonces.take()).toBe(4);
    set(9);
    expect(await nonces.take()).toBe(5);
    nonces.forget();
    expect(await nonces.take()).toBe(9);
  });

  it('does not keep a failed read', async () => {
    let fail = true;
    const nonces = new AccountNonces(() =>
      fail ? Promise.reject(new Error('RPC down')) : Promise.resolve(2),
    );
    await expect(nonces.take()).rejects.toThrow('RPC down');
    fail = false;
    expect(await nonces.take()).toBe(2);
  });
});
