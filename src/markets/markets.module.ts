import { Module } from '@nestjs/common';
import { ChainlinkSource, type ChainlinkConfig } from './chainlink.source.js';
import { CHAINLINK_SETTINGS, MARKETS_SETTINGS, type MarketsSettings } from './markets.settings.js';
import { PRICE_SOURCES, type PriceSource } from './price-source.js';
import type { StreamEndpoint } from './price-stream.js';
import { VenueConnection, venueEndpoint } from './venue-connection.js';
import { BUILT_IN_VENUES, type VenueDefinition } from './venues.js';

/**
 * Builds one PriceSource per venue enabled in MARKETS, pointed at its configured base URL,
 * then the on-chain Chainlink source when CHAINLINK_RPC_URL configures it.
 */
export function createPriceSources(config: {
  readonly markets: MarketsSettings;
  readonly chainlink: ChainlinkConfig | undefined;
}): PriceSource[] {
  const venues = config.markets.enabled.map((id) => {
    const venue = BUILT_IN_VENUES.find((candidate) => candidate.id === id);
    if (venue === undefined) throw new Error(`No built-in venue "${id}"`);
    const endpoint = venueEndpoint(config.markets.baseUrls[id] ?? venue.defaultBaseUrl);
    const headers = { ...endpoint.headers, ...apiKeyHeaders(venue, config.markets.apiKeys[id]) };
    const stream =
      venue.stream !== undefined && config.markets.streams.includes(id)
        ? {
            protocol: venue.stream.protocol,
            baseUrl: config.markets.streamUrls[id] ?? venue.stream.defaultUrl,
          }
        : undefined;
    return paced(
      venue.create(
        new VenueConnection(endpoint.baseUrl, config.markets.timeoutMs, Date.now, headers),
      ),
      venue.minIntervalMs,
      stream,
    );
  });
  if (config.chainlink === undefined) return venues;
  return [...venues, new ChainlinkSource(config.chainlink, config.markets.timeoutMs)];
}

function apiKeyHeaders(venue: VenueDefinition, apiKey: string | undefined): Record<string, string> {
  if (venue.apiKeyHeader === undefined || apiKey === undefined) return {};
  return { [venue.apiKeyHeader]: apiKey };
}

/** The source with its venue's minimum polling interval and stream attached, for the scheduler. */
function paced(
  source: PriceSource,
  minIntervalMs: number,
  stream: StreamEndpoint | undefined,
): PriceSource {
  return {
    id: source.id,
    minIntervalMs,
    ...(stream === undefined ? {} : { stream }),
    fetchQuotes: () => source.fetchQuotes(),
  };
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
