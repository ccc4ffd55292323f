/**
 * One answer shared by every asker for `ttlMs`: probes (and scrapes) more often than that load
 * neither Redis nor the chain's RPC, however many arrive. Askers during an ask share it.
 */
export class RecentAnswer<T> {
  private last: { readonly at: number; readonly answer: Promise<T> } | undefined;

  constructor(
    private readonly ttlMs: number,
    private readonly ask: () => Promise<T>,
  ) {}

  get(): Promise<T> {
    const now = Date.now();
    if (this.last === undefined || now - this.last.at >= this.ttlMs) {
      this.last = { at: now, answer: this.ask() };
    }
    return this.last.answer;
  }
}
