import { Inject, Injectable } from '@nestjs/common';
import { ASSETS_SETTINGS } from './assets.settings.js';
import { DEFAULT_CATALOGUE } from './default-catalogue.js';

/** The symbols this service sells, all quoted in USD. */
@Injectable()
export class AssetCatalogue {
  readonly symbols: readonly string[];
  private readonly known: ReadonlySet<string>;

  constructor(@Inject(ASSETS_SETTINGS.token) assets: readonly string[] | undefined) {
    this.symbols = assets ?? DEFAULT_CATALOGUE;
    this.known = new Set(this.symbols);
  }

  /** `symbol` must already be upper-case. */
  has(symbol: string): boolean {
    return this.known.has(symbol);
  }
}
