import type { AssetCatalogue } from './asset-catalogue.js';
import type { AssetListDto } from './assets.dto.js';

/** The asset list as `GET /v1/assets` and the `list_assets` tool answer it: each symbol in USD. */
export function assetList(catalogue: AssetCatalogue): AssetListDto {
  const assets = catalogue.symbols.map((symbol) => ({ symbol, quote: 'USD' as const }));
  return { count: assets.length, assets };
}
