/**
 * The tickers room's face for other rooms: its symbol rules and the check that a selection of
 * symbols can be priced now.
 */
export { parseSymbols } from './symbols.js';
export { TickerQuotesService, type TickerSelection } from './ticker-quotes.service.js';
export { TickersModule } from './tickers.module.js';
export { servedPrice } from '../common/price-precision.js';
