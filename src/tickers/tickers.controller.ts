import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ErrorCode } from '../common/api-error.js';
import { Attested } from '../attestation/index.js';
import { ApiProblemResponses, type ProblemResponse } from '../common/api-problem-responses.js';
import { Resolved } from '../paid-answers/index.js';
import { Paid } from '../payments/index.js';
import {
  SYMBOL_MAX_LENGTH,
  SYMBOL_OPENAPI_PATTERN,
  symbolListOpenApiPattern,
} from '../common/symbol-format.js';
import { MAX_LIST_SYMBOLS, MIN_LIST_SYMBOLS } from './symbols.js';
import type { TickerQuotes } from './ticker-quotes.service.js';
import { AllTickersResolver, TickerListResolver, TickerResolver } from './ticker-resolvers.js';
import { tickerAnswer, tickersAnswer } from './ticker-answers.js';
import { TickerDto, TickersDto } from './tickers.dto.js';

const UNAVAILABLE: ProblemResponse = {
  description:
    'No fresh, agreed price right now (`price_unavailable`), the payment facilitator cannot be ' +
    'reached (`facilitator_unavailable`), or the payment state (the shared ledger in Redis, or a ' +
    "batch-settlement channel's record) cannot be read or written (`shared_state_unavailable`); " +
    'retry after `Retry-After` seconds. Not charged.',
  codes: [
    ErrorCode.PriceUnavailable,
    ErrorCode.FacilitatorUnavailable,
    ErrorCode.SharedStateUnavailable,
  ],
};
const BAD_PAYMENT = ' Or the payment header is malformed (`invalid_payment`).';
const PAYING =
  'Paid per request with x402: without a payment the answer is a 402 whose `PAYMENT-REQUIRED` ' +
  'header (v2) and body (v1) say what to pay; with a valid payment the price comes with the ' +
  'receipt in `PAYMENT-RESPONSE` (v2) or `X-PAYMENT-RESPONSE` (v1). Symbols are checked, and ' +
  'prices looked up, before any payment is asked for.';

@ApiTags('tickers')
@Controller('v1')
export class TickersController {
  @Get('ticker/:symbol')
  @Attested()
  @Paid({
    price: '$0.002',
    response: TickerDto,
    description: 'The price of the symbol.',
    resolver: TickerResolver,
  })
  @ApiOperation({
    operationId: 'getTicker',
    summary: 'Current USD price of one asset',
    description:
      'The median USD price of the venues that agree on the symbol, from the latest aggregated ' +
      `snapshot. ${PAYING}`,
  })
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
  @ApiProblemResponses({
    400: {
      description: `The symbol is malformed (\`invalid_symbol\`).${BAD_PAYMENT} Not charged.`,
      codes: [ErrorCode.InvalidSymbol, ErrorCode.InvalidPayment],
    },
    404: {
      description: 'The symbol is not supported (see listAssets). Not charged.',
      codes: [ErrorCode.UnknownSymbol],
    },
    503: UNAVAILABLE,
  })
  getTicker(@Resolved() quotes: TickerQuotes): TickerDto {
    return tickerAnswer(quotes);
  }

  @Get('tickers/:symbols')
  @Attested()
  @Paid({
    price: '$0.008',
    response: TickersDto,
    description: 'The price of each symbol.',
    resolver: TickerListResolver,
  })
  @ApiOperation({
    operationId: 'getTickers',
    summary: `Current USD prices of ${MIN_LIST_SYMBOLS} to ${MAX_LIST_SYMBOLS} assets`,
    description:
      'The USD price of each symbol, in the order asked, all from the same aggregated snapshot; ' +
      `if any symbol has no fresh, agreed price the whole request is a 503. ${PAYING}`,
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
  @ApiProblemResponses({
    400: {
      description:
        'An item is malformed (`invalid_symbol`), or empty, the count is outside 2-5 or a symbol ' +
        `repeats (\`invalid_symbol_list\`).${BAD_PAYMENT} Not charged.`,
      codes: [ErrorCode.InvalidSymbolList, ErrorCode.InvalidSymbol, ErrorCode.InvalidPayment],
    },
    404: {
      description: 'A symbol is not supported (see listAssets). Not charged.',
      codes: [ErrorCode.UnknownSymbol],
    },
    503: UNAVAILABLE,
  })
  getTickers(@Resolved() quotes: TickerQuotes): TickersDto {
    return tickersAnswer(quotes);
  }

  @Get('all-tickers')
  @Attested()
  @Paid({
    price: '$0.010',
    response: TickersDto,
    description: 'Every asset that has a price right now.',
    resolver: AllTickersResolver,
  })
  @ApiOperation({
    operationId: 'getAllTickers',
    summary: 'Current USD prices of every asset',
    description:
      'Every catalogue asset that has a fresh, agreed price; assets without one are left out ' +
      `(503 when fewer than half have one). ${PAYING}`,
  })
  @ApiProblemResponses({
    400: {
      description: 'The payment header is malformed (`invalid_payment`). Not charged.',
      codes: [ErrorCode.InvalidPayment],
    },
    503: {
      description:
        'Fewer than half of the assets have a fresh, agreed price (`price_unavailable`), the ' +
        'payment facilitator cannot be reached (`facilitator_unavailable`), or the shared payment ' +
        'ledger (Redis) cannot be reached (`shared_state_unavailable`). Not charged.',
      codes: [
        ErrorCode.PriceUnavailable,
        ErrorCode.FacilitatorUnavailable,
        ErrorCode.SharedStateUnavailable,
      ],
      details: {
        [ErrorCode.PriceUnavailable]: 'Only 21 of 66 assets have a trustworthy price.',
      },
    },
  })
  getAllTickers(@Resolved() quotes: TickerQuotes): TickersDto {
    return tickersAnswer(quotes);
  }
}
