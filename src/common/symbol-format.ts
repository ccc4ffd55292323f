/** What a symbol looks like, everywhere it is read or documented: 1 to 15 letters or digits. */
export const SYMBOL_MAX_LENGTH = 15;
const SYMBOL_CHARACTERS = 'A-Za-z0-9';

/** A symbol as clients may write it (any case). */
export const SYMBOL_PATTERN = new RegExp(`^[${SYMBOL_CHARACTERS}]{1,${SYMBOL_MAX_LENGTH}}$`);

/** The same, as an OpenAPI `pattern` (length is stated separately there). */
export const SYMBOL_OPENAPI_PATTERN = `^[${SYMBOL_CHARACTERS}]+$`;

/** A comma-separated list of `min` to `max` symbols, as an OpenAPI `pattern`. */
export function symbolListOpenApiPattern(min: number, max: number): string {
  const symbol = `[${SYMBOL_CHARACTERS}]{1,${SYMBOL_MAX_LENGTH}}`;
  return `^${symbol}(,${symbol}){${min - 1},${max - 1}}$`;
}
