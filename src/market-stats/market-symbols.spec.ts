import { ApiError, ErrorCode } from '../common/api-error.js';
import { parseMarketSymbols } from './market-symbols.js';

function refusal(raw: string): ApiError {
  try {
    parseMarketSymbols(raw);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error(`${raw} was accepted`);
}

describe('parseMarketSymbols', () => {
  it('takes 1 to 25 symbols, upper-cased, in the order given', () => {
    expect(parseMarketSymbols('eth,BTC')).toEqual(['ETH', 'BTC']);
    expect(parseMarketSymbols('sol')).toEqual(['SOL']);
    expect(
      parseMarketSymbols(Array.from({ length: 25 }, (_, i) => `A${i}`).join(',')),
    ).toHaveLength(25);
  });

  it.each([
    [
      Array.from({ length: 26 }, (_, i) => `A${i}`).join(','),
      ErrorCode.InvalidSymbolList,
      'got 26',
    ],
    ['BTC,btc', ErrorCode.InvalidSymbolList, 'BTC is listed more than once'],
    ['BTC,,ETH', ErrorCode.InvalidSymbolList, 'Item 2'],
    ['', ErrorCode.InvalidSymbolList, 'Item 1'],
    ['BTC,ET-H', ErrorCode.InvalidSymbol, 'ET-H'],
  ])('refuses %j with %s (400)', (raw, code, fragment) => {
    const error = refusal(raw);
    expect(error.code).toBe(code);
    expect(error.status).toBe(400);
    expect(error.detail).toContain(fragment);
  });
});
