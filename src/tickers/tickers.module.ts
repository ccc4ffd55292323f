import { Module } from '@nestjs/common';
import { AggregationModule } from '../aggregation/aggregation.module.js';
import { AssetsModule } from '../assets/assets.module.js';
import { TickerQuotesService } from './ticker-quotes.service.js';
import { AllTickersResolver, TickerListResolver, TickerResolver } from './ticker-resolvers.js';
import { TickersController } from './tickers.controller.js';

@Module({
  imports: [AssetsModule, AggregationModule],
  controllers: [TickersController],
  providers: [TickerQuotesService, TickerResolver, TickerListResolver, AllTickersResolver],
  exports: [TickerQuotesService],
})
export class TickersModule {}
