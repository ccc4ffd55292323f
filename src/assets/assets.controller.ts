import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AssetCatalogue } from './asset-catalogue.js';
import { AssetListDto } from './assets.dto.js';
import { assetList } from './asset-list.js';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
/** The catalogue changes only with a deploy: a CDN or proxy may serve it for a minute. */
const ASSET_LIST_CACHE = 'public, max-age=60';

@ApiTags('assets')
@Controller('v1/assets')
export class AssetsController {
  /** The catalogue is fixed once configured: its answer is serialized once, not per request. */
  private readonly body: string;

  constructor(catalogue: AssetCatalogue) {
    this.body = JSON.stringify(assetList(catalogue));
  }

  @Get()
  @ApiOperation({
    operationId: 'listAssets',
    summary: 'List the assets that can be priced',
    description: 'Free. Every symbol accepted by the ticker endpoints, each quoted in USD.',
  })
  @ApiOkResponse({ type: AssetListDto, description: 'The asset catalogue.' })
  @Header('content-type', JSON_CONTENT_TYPE)
  @Header('cache-control', ASSET_LIST_CACHE)
  listAssets(): string {
    return this.body;
  }
}
