import { Inject, Injectable } from '@nestjs/common';
import { DEPLOYMENT_NOTICE, type DeploymentNotice } from '../common/deployment-notice.js';
import { PAYMENT_NETWORKS, type PaymentNetworks } from '../common/payment-networks.js';
import { PriceRefreshService } from './price-refresh.service.js';
import type { SourcesDto } from './sources.dto.js';

/**
 * The sources report as `GET /v1/sources` and the `get_sources` tool answer it: each venue's
 * state (this instance's, or the poller's through Redis), the stablecoin rates and this
 * instance's payment networks.
 */
@Injectable()
export class SourcesAnswer {
  constructor(
    private readonly refresh: PriceRefreshService,
    @Inject(DEPLOYMENT_NOTICE) private readonly notice: DeploymentNotice,
    @Inject(PAYMENT_NETWORKS) private readonly networks: PaymentNetworks,
  ) {}

  async answer(): Promise<SourcesDto> {
    const report = await this.refresh.sourceReport();
    return {
      timestamp: report.timestamp,
      aggregatedAt: report.aggregatedAt,
      poller: { instance: report.instance, thisInstance: this.refresh.polling },
      notice: this.notice,
      rates: report.rates,
      sources: report.sources,
      payments: { networks: await this.networks.states() },
    };
  }
}
