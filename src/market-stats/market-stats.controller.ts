import { Controller, Get } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Attested } from '../attestation/index.js';
import { symbolListOpenApiPattern } from '../common/symbol-format.js';
import { ApiProblemResponses } from '../common/api-problem-responses.js';
import { ErrorCode } from '../common/api-error.js';
import { Resolved } from '../paid-answers/index.js';
import { Paid } from '../payments/index.js';
import type { MarketStatsAnswer } from './market-stats-answer.js';
import { MarketDto, MarketsDto } from './market-stats.dto.js';
import { MarketStatsResolver } from './market-stats.resolver.js';
import { MAX_MARKET_SYMBOLS, MIN_MARKET_SYMBOLS } from './market-symbols.js';

@ApiTags('markets')
@ApiExtraModels(MarketDto)
@Controller('v1')
export class MarketStatsController {
  @Get('markets/:symbols')
  @Attested()
  @Paid({
    price: '$0.005',
    response: MarketsDto,
    description: 'The price and 24-hour statistics of each symbol.',
    resolver: MarketStatsResolver,
  })
  @ApiOperation({
    operationId: 'getMarkets',
    summary: `Price and 24-hour statistics of ${MIN_MARKET_SYMBOLS} to ${MAX_MARKET_SYMBOLS} assets`,
    description:
      'For each symbol, in the order asked: the price `getTicker` serves (same snapshot), the ' +
      "rolling 24-hour open, high, low and change from the venues' own statistics, the 24-hour " +
      'volume in the asset and in USD summed over the venues, how many venues made them, the ' +
      "price's spread, and the market cap where a configured source reports one. A figure no " +
      'agreeing venue reports is null, never 0. The Price-Attestation signs the prices. Paid per ' +
      'request with x402; symbols, prices and statistics are checked before any payment is ' +
      'asked for.',
  })
  @ApiParam({
    name: 'symbols',
    description: `${MIN_MARKET_SYMBOLS} to ${MAX_MARKET_SYMBOLS} distinct symbols, comma-separated, case-insensitive.`,
    examples: { two: { value: 'BTC,ETH' }, one: { value: 'sol' } },
    schema: {
      type: 'string',
      minLength: 1,
      pattern: symbolListOpenApiPattern(MIN_MARKET_SYMBOLS, MAX_MARKET_SYMBOLS),
    },
  })
  @ApiProblemResponses({
    400: {
      description:
        'An item is malformed (`invalid_symbol`), or empty, there are more than 25 or a symbol ' +
        'repeats (`invalid_symbol_list`), or the payment header is malformed ' +
        '(`invalid_payment`). Not charged.',
      codes: [ErrorCode.InvalidSymbolList, ErrorCode.InvalidSymbol, ErrorCode.InvalidPayment],
    },
    404: {
      description: 'A symbol is not supported (see listAssets). Not charged.',
      codes: [ErrorCode.UnknownSymbol],
    },
    503: {
      description:
        'A symbol has no fresh, agreed price, or no venue has answered with 24-hour statistics ' +
        'yet (`price_unavailable`), the payment facilitator cannot be reached ' +
        '(`facilitator_unavailable`), or the payment state cannot be read or written ' +
        '(`shared_state_unavailable`); retry after `Retry-After` seconds. Not charged.',
      codes: [
        ErrorCode.PriceUnavailable,
        ErrorCode.FacilitatorUnavailable,
        ErrorCode.SharedStateUnavailable,
      ],
    },
  })
  getMarkets(@Resolved() answer: MarketStatsAnswer): MarketsDto {
    return answer.body;
  }
}
