import { Module } from '@nestjs/common';
import { AssetsModule } from '../assets/assets.module.js';
import { MarketsModule } from '../markets/markets.module.js';
import { PriceRefreshService } from './price-refresh.service.js';
import { SourcesController } from './sources.controller.js';
import { InMemorySnapshotStore, SNAPSHOT_STORE } from './snapshot-store.js';

@Module({
  imports: [MarketsModule, AssetsModule],
  controllers: [SourcesController],
  providers: [PriceRefreshService, { provide: SNAPSHOT_STORE, useClass: InMemorySnapshotStore }],
  exports: [SNAPSHOT_STORE, PriceRefreshService],
})
export class AggregationModule {}
