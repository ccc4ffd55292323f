import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AssetCatalogue } from '../assets/asset-catalogue.js';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { ApiProblemResponses } from '../common/api-problem-responses.js';
import { PriceRefreshService } from './price-refresh.service.js';
import { describeSources } from './source-report.js';
import { SourcesDto } from './sources.dto.js';

@ApiTags('sources')
@Controller('v1/sources')
export class SourcesController {
  constructor(
    private readonly refresh: PriceRefreshService,
    private readonly catalogue: AssetCatalogue,
  ) {}

  @Get()
  @ApiOperation({
    operationId: 'listSources',
    summary: 'Each price source and why it is or is not used (free)',
    description:
      'Per venue: its state, last success and error, latency, failures in a row, when it will be asked ' +
      'next, and which served prices its last quotes helped make or were dropped from as outliers.',
  })
  @ApiOkResponse({ type: SourcesDto, description: 'The state of every enabled source.' })
  @ApiProblemResponses({
    503: {
      description:
        'No refresh round has completed yet, or (several instances sharing REDIS_URL) another ' +
        'instance polls the venues.',
      codes: [ErrorCode.PriceUnavailable],
    },
  })
  listSources(): SourcesDto {
    const report = this.refresh.lastRound();
    if (report === undefined && !this.refresh.polling) {
      throw new ApiError(
        ErrorCode.PriceUnavailable,
        'This instance does not poll the venues: another instance sharing its REDIS_URL does, ' +
          'and its /v1/sources says how they are doing.',
        { 'retry-after': '1' },
      );
    }
    if (report === undefined) {
      throw new ApiError(ErrorCode.PriceUnavailable, 'No refresh round has completed yet.', {
        'retry-after': '1',
      });
    }
    return {
      timestamp: new Date(report.asOf).toISOString(),
      rates: { USDT: report.result.rates.USDT ?? null, USDC: report.result.rates.USDC ?? null },
      sources: describeSources(report, this.catalogue.symbols),
    };
  }
}
