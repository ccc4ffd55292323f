import { Global, Module } from '@nestjs/common';
import { AggregationModule } from '../aggregation/aggregation.module.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsService } from './metrics.service.js';

/** Prometheus metrics for every module: payments and HTTP record into it, venues are read from. */
@Global()
@Module({
  imports: [AggregationModule],
  controllers: [MetricsController],
  providers: [MetricsService],
  exports: [MetricsService],
})
export class MetricsModule {}
