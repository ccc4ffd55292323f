import { Module } from '@nestjs/common';
import { AssetsModule } from '../assets/assets.module.js';
import { CANDLE_VENUES } from './candle-venues.js';
import { candleStoreProvider } from './candle-store.js';
import { HistoryCandles } from './history-candles.service.js';
import { OhlcResolver, PriceAtResolver } from './history-resolvers.js';
import { HistoryController } from './history.controller.js';
import { CANDLE_VENUE_LIST, VenueCandles } from './venue-candles.js';

/** The history product: candles and the price at a past moment. */
@Module({
  imports: [AssetsModule],
  controllers: [HistoryController],
  providers: [
    { provide: CANDLE_VENUE_LIST, useValue: CANDLE_VENUES },
    VenueCandles,
    candleStoreProvider,
    HistoryCandles,
    OhlcResolver,
    PriceAtResolver,
  ],
})
export class HistoryModule {}
