import { Module } from '@nestjs/common';
import { MarketsModule } from '../markets/markets.module.js';
import { PriceRefreshService } from './price-refresh.service.js';
import { InMemorySnapshotStore, SNAPSHOT_STORE } from './snapshot-store.js';

@Module({
  imports: [MarketsModule],
  providers: [PriceRefreshService, { provide: SNAPSHOT_STORE, useClass: InMemorySnapshotStore }],
  exports: [SNAPSHOT_STORE, PriceRefreshService],
})
export class AggregationModule {}
