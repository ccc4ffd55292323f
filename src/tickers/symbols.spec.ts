import { ApiError, ErrorCode } from '../common/api-error.js';
import { parseSymbol, parseSymbolList } from './symbols.js';

function errorOf(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}

describe('parseSymbol', () => {
  it.each([
    ['btc', 'BTC'],
    ['Eth', 'ETH'],
    ['1INCH', '1INCH'],
    ['ABCDEFGHIJKLMNO', 'ABCDEFGHIJKLMNO'],
  ])('accepts %s as %s', (raw, symbol) => {
    expect(parseSymbol(raw)).toBe(symbol);
  });

  it.each(['', 'BTC-USD', 'BT C', 'BTC,ETH', 'ABCDEFGHIJKLMNOP', 'ÉTH', 'BTC\u0000', '../etc'])(
    'refuses %j with invalid_symbol (400)',
    (raw) => {
      const error = errorOf(() => parseSymbol(raw));
      expect(error.code).toBe(ErrorCode.InvalidSymbol);
      expect(error.status).toBe(400);
    },
  );

  it('echoes control characters back as escapes', () => {
    expect(errorOf(() => parseSymbol('A\u0007B')).detail).toContain('"A\\u{7}B"');
  });

  it('echoes an emoji as its escape, never as ??', () => {
    const { detail } = errorOf(() => parseSymbol('BTC\u{1F600}'));
    expect(detail).toContain('"BTC\\u{1F600}"');
    expect(detail).not.toContain('?');
  });

  it('escapes the backslash, so an escape in the detail always stands for a character sent', () => {
    expect(errorOf(() => parseSymbol('A\\u{41}')).detail).toContain('"A\\u{5C}u{41}"');
  });

  it('echoes at most 32 characters, counting an emoji as one', () => {
    const { detail } = errorOf(() => parseSymbol('\u{1F600}'.repeat(40)));
    expect(detail).toContain(`"${'\\u{1F600}'.repeat(32)}…"`);
  });
});

describe('parseSymbolList', () => {
  it('upper-cases and keeps the order given', () => {
    expect(parseSymbolList('eth,BTC,sol')).toEqual(['ETH', 'BTC', 'SOL']);
  });

  it('accepts 2 and 5 symbols', () => {
    expect(parseSymbolList('a,b')).toHaveLength(2);
    expect(parseSymbolList('a,b,c,d,e')).toHaveLength(5);
  });

  it.each([
    ['BTC', ErrorCode.InvalidSymbolList, 'got 1'],
    ['A,B,C,D,E,F', ErrorCode.InvalidSymbolList, 'got 6'],
    ['BTC,,ETH', ErrorCode.InvalidSymbolList, 'Item 2'],
    [',BTC', ErrorCode.InvalidSymbolList, 'Item 1'],
    ['BTC,ETH,', ErrorCode.InvalidSymbolList, 'Item 3'],
    [',', ErrorCode.InvalidSymbolList, 'empty'],
    ['BTC,btc', ErrorCode.InvalidSymbolList, 'BTC is listed more than once'],
    ['BTC,ETH;SOL', ErrorCode.InvalidSymbol, 'ETH;SOL'],
    ['BTC, ETH', ErrorCode.InvalidSymbol, ' ETH'],
  ])('refuses %j with %s', (raw, code, fragment) => {
    const error = errorOf(() => parseSymbolList(raw));
    expect(error.code).toBe(code);
    expect(error.status).toBe(400);
    expect(error.detail).toContain(fragment);
  });
});
