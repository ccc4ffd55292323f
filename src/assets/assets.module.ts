import { Module } from '@nestjs/common';
import { AssetCatalogue } from './asset-catalogue.js';
import { AssetsController } from './assets.controller.js';

@Module({
  controllers: [AssetsController],
  providers: [AssetCatalogue],
  exports: [AssetCatalogue],
})
export class AssetsModule {}
