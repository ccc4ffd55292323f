import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastRoute, PreparedAnswer } from '../common/fast-answers.js';
import { AssetCatalogue } from './asset-catalogue.js';
import { AssetListDto } from './assets.dto.js';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

@ApiTags('assets')
@Controller('v1/assets')
export class AssetsController {
  /** The catalogue is fixed once configured: its answer is serialized once, not per request. */
  private readonly body: string;

  constructor(catalogue: AssetCatalogue) {
    const assets = catalogue.symbols.map((symbol) => ({ symbol, quote: 'USD' as const }));
    const list: AssetListDto = { count: assets.length, assets };
    this.body = JSON.stringify(list);
    this.prepared = {
      status: 200,
      headers: { 'content-type': JSON_CONTENT_TYPE },
      body: this.body,
    };
  }

  /**
   * listAssets' answer, the same bytes for every request, served before Nest's pipeline
   * (common/fast-answers.ts) and, at its exact URL, before Fastify (common/front-door.ts).
   */
  fastRoute(): FastRoute {
    const prepared = this.prepared;
    return { url: '/v1/assets', paid: false, answer: () => prepared, constant: prepared };
  }

  private readonly prepared: PreparedAnswer;

  @Get()
  @ApiOperation({
    operationId: 'listAssets',
    summary: 'List the assets that can be priced',
    description: 'Free. Every symbol accepted by the ticker endpoints, each quoted in USD.',
  })
  @ApiOkResponse({ type: AssetListDto, description: 'The asset catalogue.' })
  @Header('content-type', JSON_CONTENT_TYPE)
  listAssets(): string {
    return this.body;
  }
}
