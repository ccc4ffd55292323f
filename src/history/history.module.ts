import { Module } from '@nestjs/common';
import { AssetsModule } from '../assets/assets.module.js';
import { MARKETS_SETTINGS, type MarketsSettings } from '../markets/markets.settings.js';
import { CANDLE_VENUES } from './candle-venues.js';
import { candleStoreProvider } from './candle-store.js';
import { HistoryCandles } from './history-candles.service.js';
import { OhlcResolver, PriceAtResolver } from './history-resolvers.js';
import { HistoryController } from './history.controller.js';
import { HISTORY_SETTINGS, type HistorySettings } from './history.settings.js';
import { VenueCallSlots } from './venue-call-slots.js';
import { CANDLE_VENUE_LIST, VenueCandles } from './venue-candles.js';

/** The history product: candles and the price at a past moment. */
@Module({
  imports: [AssetsModule],
  controllers: [HistoryController],
  providers: [
    { provide: CANDLE_VENUE_LIST, useValue: CANDLE_VENUES },
    {
      // a call waits for a slot at most one venue time-out: by then every call before it ended
      provide: VenueCallSlots,
      inject: [HISTORY_SETTINGS.token, MARKETS_SETTINGS.token],
      useFactory: (history: HistorySettings, markets: MarketsSettings) =>
        new VenueCallSlots(history.venueCalls, markets.timeoutMs),
    },
    VenueCandles,
    candleStoreProvider,
    HistoryCandles,
    OhlcResolver,
    PriceAtResolver,
  ],
})
export class HistoryModule {}
