import { Module } from '@nestjs/common';
import { AggregationModule } from '../aggregation/aggregation.module.js';
import { ChainCheck } from './chain-check.js';
import { HealthController } from './health.controller.js';
import { FacilitatorCheck, SnapshotCheck } from './price-checks.js';
import { READINESS_CHECKS } from './readiness.js';
import { SharedStateCheck } from './shared-state-check.js';
import { ShutdownState } from './shutdown-state.js';

@Module({
  imports: [AggregationModule],
  controllers: [HealthController],
  providers: [
    ShutdownState,
    SnapshotCheck,
    FacilitatorCheck,
    ChainCheck,
    SharedStateCheck,
    {
      provide: READINESS_CHECKS,
      inject: [ShutdownState, SharedStateCheck, SnapshotCheck, FacilitatorCheck, ChainCheck],
      // what a paid request needs; the chain and Redis only where they are used
      useFactory: (
        ...checks: [ShutdownState, SharedStateCheck, SnapshotCheck, FacilitatorCheck, ChainCheck]
      ) =>
        checks.filter(
          (check) =>
            !(check instanceof ChainCheck || check instanceof SharedStateCheck) || check.used,
        ),
    },
  ],
  exports: [ShutdownState, READINESS_CHECKS],
})
export class HealthModule {}
