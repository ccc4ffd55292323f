import { ApiProperty } from '@nestjs/swagger';

const PRECISION =
  'Prices have 6 significant digits and at least whole cents (91260.27, 142.371, 0.154102).';

/** OpenAPI 3.1's numeric exclusiveMinimum; the package's types still describe 3.0's boolean. */
const POSITIVE_NUMBER = { type: 'number', exclusiveMinimum: 0 } as { type: string };

const PRICE_MAP = { type: 'object', additionalProperties: POSITIVE_NUMBER } as const;

const TIMESTAMP = {
  description: 'When the served prices were aggregated (ISO 8601, UTC, milliseconds).',
  format: 'date-time',
  example: '2026-11-20T12:00:00.000Z',
} as const;

const CURRENCY = {
  description: 'Currency of every price.',
  enum: ['USD'],
  example: 'USD',
} as const;

export class TickerDto {
  @ApiProperty(TIMESTAMP)
  timestamp!: string;

  @ApiProperty(CURRENCY)
  currency!: 'USD';

  @ApiProperty({
    ...PRICE_MAP,
    description: `The requested symbol, upper-case, and its price. ${PRECISION}`,
    minProperties: 1,
    maxProperties: 1,
    example: { BTC: 91234.57 },
  })
  price!: Record<string, number>;
}

export class TickersDto {
  @ApiProperty(TIMESTAMP)
  timestamp!: string;

  @ApiProperty(CURRENCY)
  currency!: 'USD';

  @ApiProperty({
    ...PRICE_MAP,
    description: `Each symbol, upper-case, and its price. ${PRECISION}`,
    example: { BTC: 91234.57, ETH: 3012.4 },
  })
  prices!: Record<string, number>;
}
