import { Module } from '@nestjs/common';
import { AggregationModule } from '../aggregation/aggregation.module.js';
import { ChainCheck } from './chain-check.js';
import { HealthController } from './health.controller.js';
import { FacilitatorCheck, SnapshotCheck } from './price-checks.js';
import { READINESS_CHECKS } from './readiness.js';
import { ShutdownState } from './shutdown-state.js';

@Module({
  imports: [AggregationModule],
  controllers: [HealthController],
  providers: [
    ShutdownState,
    SnapshotCheck,
    FacilitatorCheck,
    ChainCheck,
    {
      provide: READINESS_CHECKS,
      inject: [ShutdownState, SnapshotCheck, FacilitatorCheck, ChainCheck],
      // what a paid request needs; a shared store (Redis) joins this list when configured
      useFactory: (...checks: [ShutdownState, SnapshotCheck, FacilitatorCheck, ChainCheck]) =>
        checks.filter((check) => !(check instanceof ChainCheck) || check.used),
    },
  ],
  exports: [ShutdownState, READINESS_CHECKS],
})
export class HealthModule {}
