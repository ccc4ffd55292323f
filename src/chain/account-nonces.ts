/**
 * The transaction nonces of one sending account, read from the chain once and counted here:
 * one `eth_getTransactionCount` for the first transaction instead of one per transaction. The
 * count is only right while this process is the account's only sender (the settler lease
 * makes sure of that with shared state) and every nonce it handed out reached the chain. So
 * after any send that did not end with a hash (refused, unanswered, abandoned) and whenever the
 * lease changes hands, `forget()` makes the next `take()` read the chain's pending count again:
 * a nonce that never landed is handed out again, and one another sender used is skipped.
 */
export class AccountNonces {
  /** The chain's pending count when last read, and how many nonces were handed out since. */
  private counted: { readonly base: Promise<number>; taken: number } | undefined;

  /** `readPending`: the account's transaction count including its pending transactions. */
  constructor(private readonly readPending: () => Promise<number>) {}

  /** The nonce of the next transaction; concurrent callers get consecutive nonces. */
  async take(): Promise<number> {
    let counted = this.counted;
    if (counted === undefined) {
      const base = this.readPending();
      counted = { base, taken: 0 };
      this.counted = counted;
      // a failed read is not kept: the next take reads again
      const reading = counted;
      base.catch(() => {
        if (this.counted === reading) this.counted = undefined;
      });
    }
    const offset = counted.taken;
    counted.taken += 1;
    return (await counted.base) + offset;
  }

  /** The next `take()` reads the chain again. */
  forget(): void {
    this.counted = undefined;
  }

  /** Runs `send` with the next nonce; if it ends without a hash, the count is read again. */
  async sending<T>(send: (take: () => Promise<number>) => Promise<T>): Promise<T> {
    const attempt = { took: false };
    try {
      return await send(() => {
        attempt.took = true;
        return this.take();
      });
    } catch (error) {
      if (attempt.took) this.forget();
      throw error;
    }
  }
}
