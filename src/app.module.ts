import { Module, type DynamicModule } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { AggregationModule } from './aggregation/aggregation.module.js';
import { AssetsModule } from './assets/assets.module.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { HealthModule } from './health/health.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { DocsRedirectController } from './openapi/docs-redirect.controller.js';
import { PaymentsModule } from './payments/payments.module.js';
import { TickersModule } from './tickers/tickers.module.js';

@Module({})
export class AppModule {
  static forRoot(config?: AppConfig): DynamicModule {
    return {
      module: AppModule,
      controllers: [DocsRedirectController],
      imports: [
        ConfigModule.forRoot(config),
        ScheduleModule.forRoot(),
        PaymentsModule,
        AggregationModule,
        AssetsModule,
        TickersModule,
        HealthModule,
        MetricsModule,
      ],
    };
  }
}
