import { Module } from '@nestjs/common';
import { AggregationModule } from '../aggregation/aggregation.module.js';
import { PriceChanges } from '../aggregation/price-changes.js';
import { TickersModule } from '../tickers/index.js';
import { PolledPriceChanges } from './polled-price-changes.js';
import { StreamRegistry } from './stream-registry.js';
import { StreamRequestResolver } from './stream-request.resolver.js';
import { StreamsController } from './streams.controller.js';

/**
 * Paid price streams: `GET /v1/stream/{symbols}` (Server-Sent Events, charged per update
 * delivered through a batch-settlement channel) and its top-up.
 */
@Module({
  imports: [AggregationModule, TickersModule],
  controllers: [StreamsController],
  providers: [
    StreamRegistry,
    StreamRequestResolver,
    { provide: PriceChanges, useClass: PolledPriceChanges },
  ],
})
export class StreamsModule {}
