import { Module } from '@nestjs/common';
import { AggregationModule } from '../aggregation/aggregation.module.js';
import { HealthController } from './health.controller.js';

@Module({ imports: [AggregationModule], controllers: [HealthController] })
export class HealthModule {}
