import { Controller, Get, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiProblemResponses } from '../common/api-problem-responses.js';
import { Paid } from '../payments/paid.decorator.js';
import {
  SYMBOL_MAX_LENGTH,
  SYMBOL_OPENAPI_PATTERN,
  symbolListOpenApiPattern,
} from '../assets/symbol-format.js';
import { MAX_LIST_SYMBOLS, MIN_LIST_SYMBOLS } from './symbols.js';
import type { TickerQuotes } from './ticker-quotes.service.js';
import { ResolvedQuotes, Selects, TickerRequestGuard } from './ticker-request.guard.js';
import { TickerDto, TickersDto } from './tickers.dto.js';

const UNAVAILABLE =
  'No fresh, agreed price right now (`price_unavailable`), or the payment facilitator cannot be reached ' +
  '(`facilitator_unavailable`); retry after `Retry-After` seconds. Not charged.';
const BAD_PAYMENT = ' Or the payment header is malformed (`invalid_payment`).';

@ApiTags('tickers')
@Controller('v1')
@UseGuards(TickerRequestGuard)
export class TickersController {
  @Get('ticker/:symbol')
  @Selects('one')
  @Paid('$0.002')
  @ApiOperation({ operationId: 'getTicker', summary: 'Current USD price of one asset' })
  @ApiParam({
    name: 'symbol',
    description: 'Asset symbol, case-insensitive.',
    examples: { bitcoin: { value: 'BTC' }, lowerCase: { value: 'eth' } },
    schema: {
      type: 'string',
      minLength: 1,
      maxLength: SYMBOL_MAX_LENGTH,
      pattern: SYMBOL_OPENAPI_PATTERN,
    },
  })
  @ApiOkResponse({ type: TickerDto, description: 'The price of the symbol.' })
  @ApiProblemResponses({
    400: `The symbol is malformed (\`invalid_symbol\`).${BAD_PAYMENT} Not charged.`,
    404: 'The symbol is not supported (see listAssets). Not charged.',
    503: UNAVAILABLE,
  })
  getTicker(@ResolvedQuotes() quotes: TickerQuotes): TickerDto {
    return { timestamp: quotes.timestamp, currency: 'USD', price: quotes.prices };
  }

  @Get('tickers/:symbols')
  @Selects('many')
  @Paid('$0.008')
  @ApiOperation({
    operationId: 'getTickers',
    summary: `Current USD prices of ${MIN_LIST_SYMBOLS} to ${MAX_LIST_SYMBOLS} assets`,
  })
  @ApiParam({
    name: 'symbols',
    description: `${MIN_LIST_SYMBOLS} to ${MAX_LIST_SYMBOLS} distinct symbols, comma-separated, case-insensitive.`,
    examples: { three: { value: 'BTC,ETH,SOL' }, two: { value: 'btc,doge' } },
    schema: {
      type: 'string',
      minLength: 1,
      pattern: symbolListOpenApiPattern(MIN_LIST_SYMBOLS, MAX_LIST_SYMBOLS),
    },
  })
  @ApiOkResponse({ type: TickersDto, description: 'The price of each symbol.' })
  @ApiProblemResponses({
    400:
      'An item is empty or malformed (`invalid_symbol`), the count is outside 2-5 or a symbol repeats ' +
      `(\`invalid_symbol_list\`).${BAD_PAYMENT} Not charged.`,
    404: 'A symbol is not supported (see listAssets). Not charged.',
    503: UNAVAILABLE,
  })
  getTickers(@ResolvedQuotes() quotes: TickerQuotes): TickersDto {
    return { timestamp: quotes.timestamp, currency: 'USD', prices: quotes.prices };
  }

  @Get('all-tickers')
  @Selects('all')
  @Paid('$0.010')
  @ApiOperation({
    operationId: 'getAllTickers',
    summary: 'Current USD prices of every asset',
    description:
      'Every catalogue asset that has a fresh, agreed price; assets without one are left out.',
  })
  @ApiOkResponse({ type: TickersDto, description: 'Every asset that has a price right now.' })
  @ApiProblemResponses({
    400: `The payment header is malformed (\`invalid_payment\`). Not charged.`,
    503:
      'Fewer than half of the assets have a fresh, agreed price (`price_unavailable`), or the payment ' +
      'facilitator cannot be reached (`facilitator_unavailable`). Not charged.',
  })
  getAllTickers(@ResolvedQuotes() quotes: TickerQuotes): TickersDto {
    return { timestamp: quotes.timestamp, currency: 'USD', prices: quotes.prices };
  }
}
