import type { TickerQuotes } from './ticker-quotes.service.js';
import type { TickerDto, TickersDto } from './tickers.dto.js';

/**
 * The bodies the ticker routes answer, from the quotes their request resolved: one price
 * (`price`) or several (`prices`). The HTTP routes and the MCP tools give the same JSON.
 */

export function tickerAnswer(quotes: TickerQuotes): TickerDto {
  return { timestamp: quotes.timestamp, currency: 'USD', price: quotes.prices };
}

export function tickersAnswer(quotes: TickerQuotes): TickersDto {
  return { timestamp: quotes.timestamp, currency: 'USD', prices: quotes.prices };
}
