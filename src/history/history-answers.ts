import { createHash } from 'node:crypto';
import type { AttestableAnswer, AttestedClaims } from '../attestation/index.js';
import type { Candle, Interval } from './candle.js';
import type { OhlcDto, PriceAtDto } from './history.dto.js';

/** The hex SHA-256 of the candles as the body writes them (`JSON.stringify(body.candles)`). */
export function candlesDigest(candles: readonly Candle[]): string {
  return createHash('sha256').update(JSON.stringify(candles)).digest('hex');
}

/**
 * An OHLC answer, and what its attestation signs: one point naming the symbol, the interval and
 * the digest of every candle (`BTC:1h:<sha256>`), valued at the last candle's close with its
 * venue count, timed at the last candle's start. One signature covers up to 500 candles in a
 * header of constant size.
 */
export class OhlcAnswer implements AttestableAnswer {
  readonly digest: string;

  constructor(
    readonly symbol: string,
    readonly interval: Interval,
    readonly range: { readonly from: number; readonly to: number },
    readonly candles: readonly Candle[],
    readonly answeredAt: number,
  ) {
    if (candles.length === 0) throw new Error('an OHLC answer has at least one candle');
    this.digest = candlesDigest(candles);
  }

  private get last(): Candle {
    return this.candles[this.candles.length - 1] as Candle;
  }

  get body(): OhlcDto {
    return {
      timestamp: new Date(this.answeredAt).toISOString(),
      currency: 'USD',
      symbol: this.symbol,
      interval: this.interval,
      start: new Date(this.range.from).toISOString(),
      end: new Date(this.range.to).toISOString(),
      from: (this.candles[0] as Candle).time,
      candles: this.candles,
      digest: this.digest,
    };
  }

  attestedClaims(): AttestedClaims {
    return {
      currency: 'USD',
      timestamp: Date.parse(this.last.time),
      values: [
        {
          symbol: `${this.symbol}:${this.interval}:${this.digest}`,
          value: this.last.close,
          venues: this.last.venues.length,
          spread: 0,
        },
      ],
    };
  }
}

/**
 * The price at a moment: the close of the candle containing `t` at `resolution`, its venues,
 * its low / high as the band. Signed as the tickers are: the symbol, the price, the venues and
 * (high − low) / price as the spread, timed at the candle's start.
 */
export class PriceAtAnswer implements AttestableAnswer {
  constructor(
    readonly symbol: string,
    readonly t: number,
    readonly resolution: Interval,
    readonly candle: Candle,
  ) {}

  get body(): PriceAtDto {
    return {
      timestamp: this.candle.time,
      currency: 'USD',
      price: { [this.symbol]: this.candle.close },
      t: new Date(this.t).toISOString(),
      resolution: this.resolution,
      band: { low: this.candle.low, high: this.candle.high },
      venues: this.candle.venues,
      closed: this.candle.closed,
    };
  }

  attestedClaims(): AttestedClaims {
    const { close, high, low, venues } = this.candle;
    return {
      currency: 'USD',
      timestamp: Date.parse(this.candle.time),
      values: [
        { symbol: this.symbol, value: close, venues: venues.length, spread: (high - low) / close },
      ],
    };
  }
}
