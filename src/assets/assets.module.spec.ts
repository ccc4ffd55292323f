import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { ConfigModule } from '../config/config.module.js';
import { AssetCatalogue } from './asset-catalogue.js';
import { AssetsModule } from './assets.module.js';
import { ASSETS_SETTINGS } from './assets.settings.js';
import { DEFAULT_CATALOGUE } from './default-catalogue.js';

/** AssetsModule as the app wires it: its settings come from the global ConfigModule. */
async function assetsApp(assets: readonly string[] | undefined): Promise<NestFastifyApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [ConfigModule.forRoot({ assets: ASSETS_SETTINGS }, { assets }), AssetsModule],
  }).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), {
    logger: false,
  });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

describe('AssetsModule', () => {
  let app: NestFastifyApplication | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('sells the ASSETS the configuration gives, through the catalogue it exports', async () => {
    app = await assetsApp(['BTC', 'DOGE']);

    const catalogue = app.get(AssetCatalogue);
    expect(catalogue.symbols).toEqual(['BTC', 'DOGE']);
    expect(catalogue.has('DOGE')).toBe(true);
    expect(catalogue.has('ETH')).toBe(false);

    const answer = await app.inject({ method: 'GET', url: '/v1/assets' });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['cache-control']).toBe('public, max-age=60');
    expect(answer.json()).toEqual({
      count: 2,
      assets: [
        { symbol: 'BTC', quote: 'USD' },
        { symbol: 'DOGE', quote: 'USD' },
      ],
    });
  });

  it('sells the default catalogue when ASSETS is not set', async () => {
    app = await assetsApp(undefined);

    const answer = await app.inject({ method: 'GET', url: '/v1/assets' });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({
      count: DEFAULT_CATALOGUE.length,
      assets: DEFAULT_CATALOGUE.map((symbol) => ({ symbol, quote: 'USD' })),
    });
  });

  it('does not start without its settings provider', async () => {
    await expect(Test.createTestingModule({ imports: [AssetsModule] }).compile()).rejects.toThrow(
      /AssetCatalogue/,
    );
  });
});
