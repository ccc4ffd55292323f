import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { PRICE_SOURCES, type PriceSource } from './price-source.js';
import { VenueConnection } from './venue-connection.js';
import { BUILT_IN_VENUES } from './venues.js';

/** Builds one PriceSource per venue enabled in MARKETS, pointed at its configured base URL. */
export function createPriceSources(config: AppConfig): PriceSource[] {
  return config.markets.enabled.map((id) => {
    const venue = BUILT_IN_VENUES.find((candidate) => candidate.id === id);
    if (venue === undefined) throw new Error(`No built-in venue "${id}"`);
    const baseUrl = config.markets.baseUrls[id] ?? venue.defaultBaseUrl;
    return paced(
      venue.create(new VenueConnection(baseUrl, config.markets.timeoutMs)),
      venue.minIntervalMs,
    );
  });
}

/** The source with its venue's minimum polling interval attached, for the scheduler. */
function paced(source: PriceSource, minIntervalMs: number): PriceSource {
  return { id: source.id, minIntervalMs, fetchQuotes: () => source.fetchQuotes() };
}

@Module({
  providers: [{ provide: PRICE_SOURCES, inject: [APP_CONFIG], useFactory: createPriceSources }],
  exports: [PRICE_SOURCES],
})
export class MarketsModule {}
