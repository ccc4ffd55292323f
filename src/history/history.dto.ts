import { ApiProperty } from '@nestjs/swagger';
import { INTERVALS, type Interval } from './candle.js';

const CURRENCY = {
  description: 'Currency of every price.',
  enum: ['USD'],
  example: 'USD',
} as const;

export class CandleDto {
  @ApiProperty({
    description: 'Start of the candle (ISO 8601, UTC).',
    format: 'date-time',
    example: '2026-11-20T11:00:00.000Z',
  })
  time!: string;

  @ApiProperty({ description: 'Median of the venues’ opens, in USD.', example: 91180.2 })
  open!: number;

  @ApiProperty({ description: 'Median of the venues’ highs.', example: 91302.55 })
  high!: number;

  @ApiProperty({ description: 'Median of the venues’ lows.', example: 91122.1 })
  low!: number;

  @ApiProperty({ description: 'Median of the venues’ closes.', example: 91260.27 })
  close!: number;

  @ApiProperty({
    description: 'Base-asset volume, summed over the venues used.',
    example: 412.5318,
  })
  volume!: number;

  @ApiProperty({
    description: 'Each venue’s volume × its close in USD, summed.',
    example: 37632011.42,
  })
  volumeUsd!: number;

  @ApiProperty({
    description: 'The venues whose candles made this one.',
    type: [String],
    example: ['binance', 'bitstamp', 'coinbase', 'kraken'],
  })
  venues!: readonly string[];

  @ApiProperty({
    description: 'False for the candle still open at the time of the answer: it may change.',
    example: true,
  })
  closed!: boolean;
}

export class OhlcDto {
  @ApiProperty({
    description: 'When the answer was made (ISO 8601, UTC).',
    format: 'date-time',
    example: '2026-11-20T12:00:03.120Z',
  })
  timestamp!: string;

  @ApiProperty(CURRENCY)
  currency!: 'USD';

  @ApiProperty({ description: 'The symbol, upper-case.', example: 'BTC' })
  symbol!: string;

  @ApiProperty({ description: 'The candle interval.', enum: INTERVALS, example: '1h' })
  interval!: Interval;

  @ApiProperty({
    description:
      'Start of the first candle asked for (the range’s start, aligned down to the interval).',
    format: 'date-time',
    example: '2026-11-19T13:00:00.000Z',
  })
  start!: string;

  @ApiProperty({
    description: 'Start of the last candle asked for.',
    format: 'date-time',
    example: '2026-11-20T12:00:00.000Z',
  })
  end!: string;

  @ApiProperty({
    description:
      'Start of the first candle served: later than `start` when the range begins before any venue’s history.',
    format: 'date-time',
    example: '2026-11-19T13:00:00.000Z',
  })
  from!: string;

  @ApiProperty({
    description:
      'The candles that exist in the range, oldest first; a start no venue has is left out.',
    type: [CandleDto],
  })
  candles!: readonly CandleDto[];

  @ApiProperty({
    description:
      'Hex SHA-256 of `JSON.stringify(candles)`: what the Price-Attestation signs (docs/attestations.md).',
    example: '5be0c1f0b6f2d1ef37f0b1e1a8f0f3c2b9d4a7e6c5b4a3928170f6e5d4c3b2a1',
  })
  digest!: string;
}

export class PriceBandDto {
  @ApiProperty({ description: 'The candle’s low.', example: 91240.1 })
  low!: number;

  @ApiProperty({ description: 'The candle’s high.', example: 91275.9 })
  high!: number;
}

export class PriceAtDto {
  @ApiProperty({
    description: 'Start of the candle the price is the close of.',
    format: 'date-time',
    example: '2026-11-20T11:59:00.000Z',
  })
  timestamp!: string;

  @ApiProperty(CURRENCY)
  currency!: 'USD';

  @ApiProperty({
    description:
      'The symbol, upper-case, and the median close of its candle containing `t` across venues.',
    type: 'object',
    additionalProperties: { type: 'number' },
    example: { BTC: 91260.27 },
  })
  price!: Record<string, number>;

  @ApiProperty({
    description: 'The moment asked for (ISO 8601, UTC).',
    format: 'date-time',
    example: '2026-11-20T11:59:30.000Z',
  })
  t!: string;

  @ApiProperty({
    description:
      'The candle interval the price comes from: 1m, or the finest interval whose history still reaches `t`.',
    enum: INTERVALS,
    example: '1m',
  })
  resolution!: Interval;

  @ApiProperty({
    description: 'That candle’s low and high: where the price was during it.',
    type: PriceBandDto,
  })
  band!: PriceBandDto;

  @ApiProperty({
    description: 'The venues whose candles made the price.',
    type: [String],
    example: ['binance', 'coinbase', 'kraken'],
  })
  venues!: readonly string[];

  @ApiProperty({ description: 'False while that candle is still open.', example: true })
  closed!: boolean;
}
