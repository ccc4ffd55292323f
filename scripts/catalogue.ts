/**
 * The default catalogue's rule, recomputed: every asset at least three built-in venues quote (in
 * USD, USDT or USDC; stablecoins from USD quotes only), read through each venue's own parser.
 *
 *   npm run catalogue              # from the recorded responses in test/fixtures/markets
 *   npm run catalogue -- --live    # from one call to each venue's real endpoint (internet)
 *
 * Prints what to add to and remove from src/assets/default-catalogue.ts, and the new list.
 */
import 'reflect-metadata';
import { DEFAULT_CATALOGUE } from '../src/assets/default-catalogue.js';
import { loadConfig } from '../src/app-config.js';
import { createPriceSources } from '../src/markets/markets.module.js';
import type { RawQuote } from '../src/markets/price-source.js';
import { pricingVenuesBySymbol, recordedQuotes } from '../test/support/recorded-quotes.js';

const MIN_VENUES = 3;

async function liveQuotes(): Promise<RawQuote[]> {
  const config = loadConfig({ X402_PAY_TO: '0x0000000000000000000000000000000000000001' });
  const sources = createPriceSources(config);
  const results = await Promise.allSettled(sources.map((source) => source.fetchQuotes()));
  const quotes: RawQuote[] = [];
  for (const [index, result] of results.entries()) {
    const id = sources[index]?.id ?? '?';
    if (result.status === 'fulfilled') {
      console.log(`${id.padEnd(10)} ${result.value.length} quotes`);
      quotes.push(...result.value);
    } else {
      const reason: unknown = result.reason;
      console.log(
        `${id.padEnd(10)} failed: ${reason instanceof Error ? reason.message : String(reason)}`,
      );
    }
  }
  return quotes;
}

const live = process.argv.includes('--live');
const quotes = live ? await liveQuotes() : recordedQuotes();
const venues = pricingVenuesBySymbol(quotes);
const quotedByThree = new Set(
  [...venues].filter(([, ids]) => ids.size >= MIN_VENUES).map(([symbol]) => symbol),
);
const kept = DEFAULT_CATALOGUE.filter((symbol) => quotedByThree.has(symbol));
const added = [...quotedByThree].filter((symbol) => !DEFAULT_CATALOGUE.includes(symbol)).sort();
const dropped = DEFAULT_CATALOGUE.filter((symbol) => !quotedByThree.has(symbol));
const describe = (symbol: string): string =>
  `${symbol} (${[...(venues.get(symbol) ?? [])].sort().join(', ') || 'no venue'})`;

console.log(`\nFrom ${live ? 'the live venues' : 'the recorded fixtures'}:`);
console.log(`add:    ${added.map(describe).join('; ') || 'nothing'}`);
console.log(`remove: ${dropped.map(describe).join('; ') || 'nothing'}`);
console.log(`\n${quotedByThree.size} assets, current order first, new ones last:`);
console.log(JSON.stringify([...kept, ...added]));
