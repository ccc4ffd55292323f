import { Module } from '@nestjs/common';
import { AggregationModule } from '../aggregation/aggregation.module.js';
import { TickersModule } from '../tickers/tickers.module.js';
import { MarketStatsController } from './market-stats.controller.js';
import { MarketStatsResolver } from './market-stats.resolver.js';
import { MarketStatsService } from './market-stats.service.js';

/**
 * Market statistics (`GET /v1/markets/:symbols`): each venue's 24-hour statistics read on its
 * own clock, aggregated per symbol beside the price the tickers serve.
 */
@Module({
  imports: [TickersModule, AggregationModule],
  controllers: [MarketStatsController],
  providers: [MarketStatsService, MarketStatsResolver],
  exports: [MarketStatsService],
})
export class MarketStatsModule {}
