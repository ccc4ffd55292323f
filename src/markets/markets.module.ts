import { Module } from '@nestjs/common';
import { ChainlinkSource, type ChainlinkConfig } from './chainlink.source.js';
import { CHAINLINK_SETTINGS, MARKETS_SETTINGS, type MarketsSettings } from './markets.settings.js';
import { PRICE_SOURCES, type PriceSource } from './price-source.js';
import { VenueConnection, venueEndpoint } from './venue-connection.js';
import { quoteFetcher, type VenueDefinition } from './venue-definition.js';
import { builtInVenue } from './venues.js';

/**
 * Builds one PriceSource per venue enabled in MARKETS, pointed at its configured base URL,
 * then the on-chain Chainlink source when CHAINLINK_RPC_URL configures it.
 */
export function createPriceSources(config: {
  readonly markets: MarketsSettings;
  readonly chainlink: ChainlinkConfig | undefined;
}): PriceSource[] {
  const venues = config.markets.enabled.map((id) => venueSource(builtInVenue(id), config.markets));
  if (config.chainlink === undefined) return venues;
  return [...venues, new ChainlinkSource(config.chainlink, config.markets.timeoutMs)];
}

/**
 * A venue as the scheduler sees it: its id (stamped on every quote, polled or streamed), its
 * minimum interval, its stream when MARKET_STREAMS uses it, and its fetcher.
 */
export function venueSource(venue: VenueDefinition, markets: MarketsSettings): PriceSource {
  const { id } = venue;
  const endpoint = venueEndpoint(markets.baseUrls[id] ?? venue.defaultBaseUrl);
  const headers = { ...endpoint.headers, ...apiKeyHeaders(venue, markets.apiKeys[id]) };
  const fetcher = quoteFetcher(
    venue,
    new VenueConnection(endpoint.baseUrl, markets.timeoutMs, Date.now, headers),
  );
  const stream =
    venue.stream !== undefined && markets.streams.includes(id)
      ? {
          venue: id,
          protocol: venue.stream.protocol,
          baseUrl: markets.streamUrls[id] ?? venue.stream.defaultUrl,
        }
      : undefined;
  return {
    id,
    minIntervalMs: venue.minIntervalMs,
    ...(stream === undefined ? {} : { stream }),
    fetchQuotes: async () =>
      (await fetcher.fetchQuotes()).map((quote) => ({ ...quote, source: id })),
  };
}

function apiKeyHeaders(venue: VenueDefinition, apiKey: string | undefined): Record<string, string> {
  if (venue.apiKeyHeader === undefined || apiKey === undefined) return {};
  return { [venue.apiKeyHeader]: apiKey };
}

@Module({
  providers: [
    {
      provide: PRICE_SOURCES,
      inject: [MARKETS_SETTINGS.token, CHAINLINK_SETTINGS.token],
      useFactory: (markets: MarketsSettings, chainlink: ChainlinkConfig | undefined) =>
        createPriceSources({ markets, chainlink }),
    },
  ],
  exports: [PRICE_SOURCES],
})
export class MarketsModule {}
