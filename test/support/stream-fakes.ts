import { PriceChanges, type PriceChange } from '../../src/aggregation/price-changes.js';
import type { MeteredCharge, MeteredSale } from '../../src/payments/index.js';
import type { StreamsSettings } from '../../src/streams/streams.settings.js';

/** Stream limits small enough for unit tests. */
export const SETTINGS: StreamsSettings = {
  perPayer: 2,
  perInstance: 3,
  perClient: 4,
  idleMs: 60_000,
  unchargedMs: 60_000,
  stallMs: 10_000,
  maxBudget: 1_000_000n,
  topUpWaitMs: 300,
  keepAliveMs: 100,
};

/** Changes pushed by the test. */
export class PushedChanges extends PriceChanges {
  private listener: ((change: PriceChange) => void) | undefined;
  subscribe(_symbols: readonly string[], listener: (change: PriceChange) => void): () => void {
    this.listener = listener;
    return () => {
      this.listener = undefined;
    };
  }
  readonly known = new Map<string, PriceChange>();
  current(symbol: string): PriceChange | undefined {
    return this.known.get(symbol);
  }
  push(price: number): void {
    const now = Date.now();
    this.listener?.({
      symbol: 'BTC',
      price,
      timestamp: now,
      venues: 3,
      spread: 0.001,
      oldestInputAt: now,
    });
  }
}

/** A sale over an account of `covered` units, recording what it charged and took back. */
export function fakeSale(
  covered: number,
): MeteredSale & { takenBack: string[]; chargedTotal: () => number } {
  let charged = 0;
  let cover = covered;
  const takenBack: string[] = [];
  return {
    accountId: `0x${'ab'.repeat(32)}`,
    payer: '0xpayer',
    network: 'eip155:84532',
    unitPrice: '100',
    charged: '0',
    covered: String(covered * 100),
    resend: () => Promise.resolve(undefined),
    takenBack,
    chargedTotal: () => charged,
    charge: (): Promise<MeteredCharge> => {
      if (charged >= cover) {
        return Promise.resolve({
          kind: 'exhausted',
          charged: String(charged * 100),
          covered: String(cover * 100),
          required: { x402Version: 2, resource: { url: 'u' }, accepts: [] } as never,
        });
      }
      charged += 1;
      return Promise.resolve({
        kind: 'charged',
        cumulative: String(charged * 100),
        id: `c${charged}`,
      });
    },
    takeBack: ({ cumulative }) => {
      takenBack.push(cumulative);
      charged -= 1;
      return Promise.resolve();
    },
    topUp: () => {
      cover += 2;
      return Promise.resolve({ charged: String(charged * 100), covered: String(cover * 100) });
    },
    end: () => undefined,
  };
}
