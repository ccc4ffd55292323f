import { ApiProperty, getSchemaPath, type ApiPropertyOptions } from '@nestjs/swagger';

const ROLLING =
  'over the rolling last 24 hours, the median of the agreeing venues that report it (null when ' +
  'fewer than the quorum do)';

/** OpenAPI 3.1's numeric exclusiveMinimum; the package's types still describe 3.0's boolean. */
const POSITIVE_NUMBER = { type: 'number', exclusiveMinimum: 0 } as { type: 'number' };

function nullableNumber(description: string, example: number): ApiPropertyOptions {
  return { type: 'number', nullable: true, description, example };
}

/** One symbol's market statistics. */
export class MarketDto {
  @ApiProperty({
    ...POSITIVE_NUMBER,
    description:
      'The USD price `getTicker` serves for the symbol, from the same snapshot: 6 significant ' +
      'digits and at least whole cents.',
    example: 91260.27,
  })
  price!: number;

  @ApiProperty(nullableNumber(`USD price 24 hours ago, ${ROLLING}.`, 92986.2))
  open24h!: number | null;

  @ApiProperty(nullableNumber(`Highest USD price ${ROLLING}.`, 94492.5))
  high24h!: number | null;

  @ApiProperty(nullableNumber(`Lowest USD price ${ROLLING}.`, 89881.4))
  low24h!: number | null;

  @ApiProperty(nullableNumber('`price − open24h`, in USD; null without an open.', -1725.93))
  change24h!: number | null;

  @ApiProperty(
    nullableNumber(
      '`(price − open24h) / open24h`, in percent to 2 decimals; null without an open.',
      -1.86,
    ),
  )
  changePct24h!: number | null;

  @ApiProperty(
    nullableNumber(
      'Traded in the rolling last 24 hours, in the asset: the sum over the agreeing venues ' +
        'that report it, each venue market counted once (null when none does).',
      75212.63,
    ),
  )
  volume24h!: number | null;

  @ApiProperty(
    nullableNumber(
      'Traded in the rolling last 24 hours, in USD: the sum of the quote volumes the agreeing ' +
        'venues report, USDT and USDC converted at their USD rate (null when none does).',
      6884551217.47,
    ),
  )
  volumeUsd24h!: number | null;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description:
      'Venues whose 24-hour statistics agreed (their last price passed the outlier rule) and ' +
      'made the figures; 0 when too few did, and every 24-hour figure is then null.',
    example: 7,
  })
  venues!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description:
      "(highest − lowest) / price of the venues' last prices the price is the median of, in " +
      'basis points: the spread the Price-Attestation signs.',
    example: 12,
  })
  spreadBps!: number;

  @ApiProperty(
    nullableNumber(
      'Market capitalisation in USD as a configured source reports it (CoinGecko); null when ' +
        'none does or its price disagrees with ours. Never estimated.',
      1822394762748,
    ),
  )
  marketCapUsd!: number | null;
}

export class MarketsDto {
  @ApiProperty({
    description: 'When the served prices were aggregated (ISO 8601, UTC, milliseconds).',
    format: 'date-time',
    example: '2026-11-20T12:00:00.000Z',
  })
  timestamp!: string;

  @ApiProperty({
    description: 'Currency of every price and volume.',
    enum: ['USD'],
    example: 'USD',
  })
  currency!: 'USD';

  @ApiProperty({
    type: 'object',
    description: 'Each symbol asked for, upper-case, in the order asked, and its statistics.',
    additionalProperties: { $ref: getSchemaPath(MarketDto) },
    example: {
      BTC: {
        price: 91260.27,
        open24h: 92986.2,
        high24h: 94492.5,
        low24h: 89881.4,
        change24h: -1725.93,
        changePct24h: -1.86,
        volume24h: 75212.63,
        volumeUsd24h: 6884551217.47,
        venues: 7,
        spreadBps: 12,
        marketCapUsd: 1822394762748,
      },
    },
  })
  markets!: Record<string, MarketDto>;
}
