import { ApiError, ErrorCode } from '../common/api-error.js';
import { parseSymbol } from '../tickers/symbols.js';

export const MIN_MARKET_SYMBOLS = 1;
export const MAX_MARKET_SYMBOLS = 25;

/** A comma-separated list of 1 to 25 distinct symbols, upper-cased, in the order given. */
export function parseMarketSymbols(raw: string): string[] {
  const items = raw.split(',');
  const empty = items.findIndex((item) => item === '');
  if (empty !== -1) {
    throw new ApiError(
      ErrorCode.InvalidSymbolList,
      `Item ${empty + 1} of the symbol list is empty; separate symbols with single commas.`,
    );
  }
  if (items.length > MAX_MARKET_SYMBOLS) {
    throw new ApiError(
      ErrorCode.InvalidSymbolList,
      `Ask for ${MIN_MARKET_SYMBOLS} to ${MAX_MARKET_SYMBOLS} symbols; got ${items.length}.`,
    );
  }
  const symbols = items.map(parseSymbol);
  const duplicate = symbols.find((symbol, index) => symbols.indexOf(symbol) !== index);
  if (duplicate !== undefined) {
    throw new ApiError(ErrorCode.InvalidSymbolList, `${duplicate} is listed more than once.`);
  }
  return symbols;
}
