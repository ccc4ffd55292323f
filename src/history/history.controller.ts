import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Attested } from '../attestation/index.js';
import { ErrorCode } from '../common/api-error.js';
import { ApiProblemResponses, type ProblemResponse } from '../common/api-problem-responses.js';
import { SYMBOL_MAX_LENGTH, SYMBOL_OPENAPI_PATTERN } from '../common/symbol-format.js';
import { Resolved } from '../paid-answers/index.js';
import { Paid } from '../payments/index.js';
import { INTERVALS } from './candle.js';
import type { OhlcAnswer, PriceAtAnswer } from './history-answers.js';
import { DEFAULT_CANDLES, DEFAULT_INTERVAL, MAX_CANDLES } from './history-request.js';
import { OhlcResolver, PriceAtResolver } from './history-resolvers.js';
import { OhlcDto, PriceAtDto } from './history.dto.js';

const TIME = 'ISO 8601 (`2026-01-01T00:00:00Z`) or Unix seconds (`1767225600`).';
const NOT_CHARGED = ' Checked before any payment is asked for; not charged.';

const SYMBOL_PARAM = {
  name: 'symbol',
  description: 'Asset symbol, case-insensitive.',
  examples: { bitcoin: { value: 'BTC' }, lowerCase: { value: 'eth' } },
  schema: {
    type: 'string',
    minLength: 1,
    maxLength: SYMBOL_MAX_LENGTH,
    pattern: SYMBOL_OPENAPI_PATTERN,
  },
} as const;

const PROBLEMS: Record<400 | 404 | 503, ProblemResponse> = {
  400: {
    description:
      'A malformed symbol (`invalid_symbol`), time or interval, an interval not offered, `start` ' +
      `after \`end\`, a future \`start\` or \`t\`, more than ${MAX_CANDLES} candles, or a range no venue ` +
      `has candles for (\`bad_request\`); or a malformed payment header (\`invalid_payment\`).${NOT_CHARGED}`,
    codes: [ErrorCode.InvalidSymbol, ErrorCode.BadRequest, ErrorCode.InvalidPayment],
  },
  404: {
    description: `The symbol is not supported (see listAssets).${NOT_CHARGED}`,
    codes: [ErrorCode.UnknownSymbol],
  },
  503: {
    description:
      'No venue answered for the candles, or they are busy with other history requests ' +
      '(`price_unavailable`), the payment facilitator cannot be ' +
      'reached (`facilitator_unavailable`), or the shared payment state cannot be read ' +
      '(`shared_state_unavailable`); retry after `Retry-After` seconds. Not charged.',
    codes: [
      ErrorCode.PriceUnavailable,
      ErrorCode.FacilitatorUnavailable,
      ErrorCode.SharedStateUnavailable,
    ],
  },
};

/** Candles and the price at a past moment, aggregated across venues' own candle endpoints. */
@ApiTags('history')
@Controller('v1')
export class HistoryController {
  @Get('ohlc/:symbol')
  @Attested()
  @Paid({
    price: '$0.005',
    response: OhlcDto,
    description: 'The candles of the range that exist.',
    resolver: OhlcResolver,
  })
  @ApiOperation({
    operationId: 'getOhlc',
    summary: 'USD candles (OHLCV) of one asset',
    description:
      'Candles aggregated across the venues that serve the interval (docs/pricing.md, "How a candle ' +
      'is made"): open / high / low / close the median of the venues after an outlier cut, volumes ' +
      `summed, the venues named per candle, the candle still open marked \`closed: false\`. At most ` +
      `${MAX_CANDLES} candles; without \`start\`, the last ${DEFAULT_CANDLES}. Signed: the ` +
      'Price-Attestation covers every candle through `digest`.',
  })
  @ApiParam(SYMBOL_PARAM)
  @ApiQuery({
    name: 'interval',
    required: false,
    enum: INTERVALS,
    description: `Candle interval; default ${DEFAULT_INTERVAL}.`,
    example: '1h',
  })
  @ApiQuery({
    name: 'start',
    required: false,
    description: `The first candle's time (aligned down to the interval): ${TIME} Not in the future.`,
    example: '2026-11-19T13:00:00Z',
    schema: { type: 'string' },
  })
  @ApiQuery({
    name: 'end',
    required: false,
    description: `The last candle's time: ${TIME} Default now; a future end is now.`,
    example: '1795176000',
    schema: { type: 'string' },
  })
  @ApiProblemResponses(PROBLEMS)
  getOhlc(@Resolved() answer: OhlcAnswer): OhlcDto {
    return answer.body;
  }

  @Get('price-at/:symbol')
  @Attested()
  @Paid({
    price: '$0.003',
    response: PriceAtDto,
    description: 'The price at the moment asked.',
    resolver: PriceAtResolver,
  })
  @ApiOperation({
    operationId: 'getPriceAt',
    summary: 'USD price of one asset at a past moment',
    description:
      'The median close across venues of the 1-minute candle containing `t`, with the venues used ' +
      "and that minute's low / high as its band; where no venue's 1-minute history reaches `t`, " +
      'the finest interval that does, said in `resolution`. Signed like a ticker.',
  })
  @ApiParam(SYMBOL_PARAM)
  @ApiQuery({
    name: 't',
    required: true,
    description: `The moment: ${TIME} Not in the future.`,
    example: '2026-11-20T11:59:30Z',
    schema: { type: 'string' },
  })
  @ApiProblemResponses(PROBLEMS)
  getPriceAt(@Resolved() answer: PriceAtAnswer): PriceAtDto {
    return answer.body;
  }
}
