/**
 * The symbols sold by default: assets that at least two of the built-in USD venues quote
 * in USD (checked against the recorded venue fixtures by default-catalogue.spec.ts).
 * Roughly by market size; `ASSETS` replaces the list.
 */
export const DEFAULT_CATALOGUE: readonly string[] = [
  'BTC', 'ETH', 'XRP', 'SOL', 'DOGE', 'ADA', 'LINK', 'AVAX', 'XLM', 'BCH',
  'LTC', 'DOT', 'SHIB', 'UNI', 'AAVE', 'PEPE', 'NEAR', 'ETC', 'POL', 'ATOM',
  'FIL', 'ALGO', 'ARB', 'OP', 'GRT', 'CRV', 'LDO', 'FET', 'SAND', 'MANA',
  'COMP', 'SNX', 'YFI', 'CHZ', 'BAT', 'USDT', 'USDC',
];
