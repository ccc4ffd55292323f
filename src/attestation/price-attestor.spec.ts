import { generatePrivateKey } from 'viem/accounts';
import type { AggregatedPrice } from '../aggregation/aggregate.js';
import type { PriceSnapshot } from '../aggregation/price-snapshot.js';
import type { TickerQuotes } from '../tickers/ticker-quotes.service.js';
import { AttestationSigner } from './attestation-signer.js';
import { decodePriceAttestation, type PriceAttestationMessage } from './price-attestation.js';
import { PriceAttestor, attestedMessage } from './price-attestor.js';

/** Signs with a real key and counts what it was asked to sign. */
class CountingSigner extends AttestationSigner {
  readonly signed: PriceAttestationMessage[] = [];

  override signPrices(message: PriceAttestationMessage) {
    this.signed.push(message);
    return super.signPrices(message);
  }
}

const AS_OF = Date.parse('2026-11-20T12:00:00.000Z');

/** The oldest input behind each price of `snapshot()`: ETH's venue b lagged 40 s. */
const OLDEST = { BTC: AS_OF - 2_000, ETH: AS_OF - 40_300 } as const;

function aggregated(symbol: keyof typeof OLDEST, price: number, sources: string[], spread: number) {
  const oldestInputAt = OLDEST[symbol];
  return { symbol, price, sources, observedAt: AS_OF - 100, oldestInputAt, spread };
}

function snapshot(): PriceSnapshot {
  return {
    asOf: AS_OF,
    prices: new Map<string, AggregatedPrice>([
      ['BTC', aggregated('BTC', 91260.274, ['a', 'b', 'c'], 0.0012)],
      ['ETH', aggregated('ETH', 3012.456, ['a', 'b'], 0.00049)],
    ]),
  };
}

function quotes(of: PriceSnapshot, prices: Record<string, number>): TickerQuotes {
  return { timestamp: new Date(of.asOf).toISOString(), prices, snapshot: of };
}

describe('PriceAttestor', () => {
  const key = generatePrivateKey();

  it('signs the body order, with venues and spread from the snapshot', () => {
    const current = snapshot();
    expect(attestedMessage(quotes(current, { ETH: 3012.46, BTC: 91260.27 }))).toEqual({
      currency: 'USD',
      timestamp: BigInt(OLDEST.ETH),
      prices: [
        { symbol: 'ETH', price: 301_246_000_000n, venues: 2, spreadBps: 5 },
        { symbol: 'BTC', price: 9_126_027_000_000n, venues: 3, spreadBps: 12 },
      ],
    });
  });

  it("signs as its time the oldest input behind the answer's prices, not the snapshot's time", () => {
    const current = snapshot();
    expect(attestedMessage(quotes(current, { BTC: 91260.27 })).timestamp).toBe(BigInt(OLDEST.BTC));
    expect(attestedMessage(quotes(current, { BTC: 91260.27, ETH: 3012.46 })).timestamp).toBe(
      BigInt(OLDEST.ETH),
    );
  });

  it('never signs a time later than the snapshot, and whole milliseconds rounded down', () => {
    const late: PriceSnapshot = {
      asOf: AS_OF,
      prices: new Map([['BTC', { ...aggregated('BTC', 1, ['a'], 0), oldestInputAt: AS_OF + 5 }]]),
    };
    expect(attestedMessage(quotes(late, { BTC: 1 })).timestamp).toBe(BigInt(AS_OF));
    const fractional: PriceSnapshot = {
      asOf: AS_OF,
      prices: new Map([['BTC', { ...aggregated('BTC', 1, ['a'], 0), oldestInputAt: AS_OF - 0.5 }]]),
    };
    expect(attestedMessage(quotes(fractional, { BTC: 1 })).timestamp).toBe(BigInt(AS_OF - 1));
  });

  it('refuses to sign a price whose oldest input has no time', () => {
    const unknown = { ...aggregated('BTC', 1, ['a'], 0), oldestInputAt: undefined };
    const current = {
      asOf: AS_OF,
      prices: new Map([['BTC', unknown as unknown as AggregatedPrice]]),
    };
    expect(() => attestedMessage(quotes(current, { BTC: 1 }))).toThrow(
      'BTC has no time for its oldest input',
    );
  });

  it('signs once per snapshot and selection', async () => {
    const signer = new CountingSigner(key);
    const attestor = new PriceAttestor(signer);
    const current = snapshot();
    const both = quotes(current, { BTC: 91260.27, ETH: 3012.46 });
    const first = await Promise.all([attestor.headerFor(both), attestor.headerFor(both)]);
    expect(await attestor.headerFor(both)).toBe(first[0]);
    expect(first[1]).toBe(first[0]);
    expect(signer.signed).toHaveLength(1);
    await attestor.headerFor(quotes(current, { BTC: 91260.27 }));
    await attestor.headerFor(quotes(snapshot(), { BTC: 91260.27, ETH: 3012.46 }));
    expect(signer.signed).toHaveLength(3);
  });

  it('signs the same snapshot identically wherever the key is shared', async () => {
    const answer = (of: PriceSnapshot) => quotes(of, { BTC: 91260.27 });
    const one = await new PriceAttestor(new AttestationSigner(key)).headerFor(answer(snapshot()));
    const two = await new PriceAttestor(new AttestationSigner(key)).headerFor(answer(snapshot()));
    expect(two).toBe(one);
    expect(decodePriceAttestation(one ?? '').message.prices).toHaveLength(1);
  });

  it('makes nothing with attestation off', () => {
    expect(new PriceAttestor(null).headerFor(quotes(snapshot(), { BTC: 1 }))).toBeUndefined();
  });
});
