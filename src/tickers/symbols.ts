import { SYMBOL_PATTERN } from '../common/symbol-format.js';
import { ApiError, ErrorCode } from '../common/api-error.js';

export const MIN_LIST_SYMBOLS = 2;
export const MAX_LIST_SYMBOLS = 5;

/** A path symbol, case-insensitive, to its upper-case form; malformed input is a 400. */
export function parseSymbol(raw: string): string {
  if (!SYMBOL_PATTERN.test(raw)) {
    throw new ApiError(
      ErrorCode.InvalidSymbol,
      `"${printable(raw)}" is not a symbol: use 1 to 15 letters or digits, such as BTC.`,
    );
  }
  return raw.toUpperCase();
}

/** A comma-separated list of 2 to 5 distinct symbols, upper-cased, in the order given. */
export function parseSymbolList(raw: string): string[] {
  return parseSymbols(raw, MIN_LIST_SYMBOLS, MAX_LIST_SYMBOLS);
}

/** A comma-separated list of `min` to `max` distinct symbols, upper-cased, in the order given. */
export function parseSymbols(raw: string, min: number, max: number): string[] {
  const items = raw.split(',');
  const empty = items.findIndex((item) => item === '');
  if (empty !== -1) {
    throw new ApiError(
      ErrorCode.InvalidSymbolList,
      `Item ${empty + 1} of the symbol list is empty; separate symbols with single commas.`,
    );
  }
  const symbols = items.map(parseSymbol);
  if (symbols.length < min || symbols.length > max) {
    throw new ApiError(
      ErrorCode.InvalidSymbolList,
      `Ask for ${min} to ${max} symbols; got ${symbols.length}.`,
    );
  }
  const duplicate = symbols.find((symbol, index) => symbols.indexOf(symbol) !== index);
  if (duplicate !== undefined) {
    throw new ApiError(ErrorCode.InvalidSymbolList, `${duplicate} is listed more than once.`);
  }
  return symbols;
}

/** Longest part of a refused symbol echoed back, in characters. */
const ECHOED_CHARACTERS = 32;

/**
 * The refused input as the detail echoes it: printable ASCII as is, every other character
 * (controls, emoji, look-alikes) and the backslash as a `\u{1F600}` escape, so nothing the
 * client sent can hide or forge text in the answer, and nothing is lost as `?`.
 */
function printable(raw: string): string {
  const clipped = new RegExp(`^.{0,${ECHOED_CHARACTERS}}`, 'su').exec(raw)?.[0] ?? '';
  const escaped = clipped.replace(
    /[^\x20-\x5b\x5d-\x7e]/gu,
    (character) => `\\u{${(character.codePointAt(0) ?? 0).toString(16).toUpperCase()}}`,
  );
  return clipped.length < raw.length ? `${escaped}…` : escaped;
}
