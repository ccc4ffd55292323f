import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { AggregationModule } from './aggregation/aggregation.module.js';
import { AssetsModule } from './assets/assets.module.js';
import { AttestationModule } from './attestation/attestation.module.js';
import { SETTINGS_SECTIONS, loadConfig, type AppConfig } from './app-config.js';
import { ConfigModule } from './config/config.module.js';
import { DeploymentNoticeModule, type DeploymentNotice } from './common/deployment-notice.js';
import { HealthModule } from './health/health.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { DocsRedirectController } from './openapi/docs-redirect.controller.js';
import { PaymentsModule } from './payments/index.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { SharedStateModule } from './shared-state/shared-state.module.js';
import { McpModule } from './mcp/mcp.module.js';
import { X402DiscoveryModule } from './x402-discovery/x402-discovery.module.js';
import { TickersModule } from './tickers/tickers.module.js';
import { HistoryModule } from './history/history.module.js';
import { MarketStatsModule } from './market-stats/market-stats.module.js';
import { StreamsModule } from './streams/streams.module.js';

@Module({})
export class AppModule {
  /**
   * `features`: further modules served beside the built-in ones (an extension's controllers);
   * `notice`: what a test deployment says about itself (see DEPLOYMENT_NOTICE).
   */
  static forRoot(
    config: AppConfig = loadConfig(process.env),
    features: NonNullable<ModuleMetadata['imports']> = [],
    notice: DeploymentNotice = null,
  ): DynamicModule {
    return {
      module: AppModule,
      controllers: [DocsRedirectController],
      imports: [
        ConfigModule.forRoot(SETTINGS_SECTIONS, config),
        DeploymentNoticeModule.forRoot(notice),
        ScheduleModule.forRoot(),
        SharedStateModule,
        PaymentsModule,
        AttestationModule,
        AggregationModule,
        AssetsModule,
        TickersModule,
        HistoryModule,
        MarketStatsModule,
        StreamsModule,
        McpModule,
        X402DiscoveryModule,
        HealthModule,
        RateLimitModule,
        MetricsModule,
        ...features,
      ],
    };
  }
}
