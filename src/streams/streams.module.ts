import { Module } from '@nestjs/common';
import { AggregationModule } from '../aggregation/aggregation.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { TickersModule } from '../tickers/index.js';
import { StreamRegistry } from './stream-registry.js';
import { StreamRequestResolver } from './stream-request.resolver.js';
import { StreamsController } from './streams.controller.js';

/**
 * Paid price streams: `GET /v1/stream/{symbols}` (Server-Sent Events, charged per update
 * delivered through a batch-settlement channel) and its top-up.
 */
@Module({
  imports: [AggregationModule, TickersModule, RateLimitModule],
  controllers: [StreamsController],
  // PriceChanges comes from the aggregation module
  providers: [StreamRegistry, StreamRequestResolver],
})
export class StreamsModule {}
