import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AssetCatalogue } from './asset-catalogue.js';
import { AssetListDto } from './assets.dto.js';

@ApiTags('assets')
@Controller('v1/assets')
export class AssetsController {
  constructor(private readonly catalogue: AssetCatalogue) {}

  @Get()
  @ApiOperation({
    operationId: 'listAssets',
    summary: 'List the assets that can be priced',
    description: 'Free. Every symbol accepted by the ticker endpoints, each quoted in USD.',
  })
  @ApiOkResponse({ type: AssetListDto, description: 'The asset catalogue.' })
  listAssets(): AssetListDto {
    const assets = this.catalogue.symbols.map((symbol) => ({ symbol, quote: 'USD' as const }));
    return { count: assets.length, assets };
  }
}
