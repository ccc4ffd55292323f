import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../../app.js';
import { loadConfig } from '../../app-config.js';
import { PaidRouteExplorer } from './paid-routes.js';
import { X402Paywall } from './x402-paywall.js';

/** Every route sold and its price: a pricing change shows up here, in review. */
describe('paid routes', () => {
  let app: NestFastifyApplication;
  // the channel store opens its directory when the app is built: a throwaway one, not the
  // project's data/batch-settlement, which another process may hold
  const channels = mkdtempSync(path.join(os.tmpdir(), 'paid-routes-channels-'));

  beforeAll(async () => {
    const config = loadConfig({
      X402_PAY_TO: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      X402_SCHEMES: 'exact,batch-settlement',
      X402_BATCH_DATA_DIR: channels,
    });
    app = await createApp({ config, logger: false });
  });

  afterAll(async () => {
    await app.close();
    rmSync(channels, { recursive: true, force: true });
  });

  it('are exactly these, at these prices', () => {
    expect(app.get(PaidRouteExplorer).explore()).toEqual([
      {
        method: 'GET',
        path: '/v1/all-tickers',
        price: '$0.010',
        handler: 'TickersController.getAllTickers',
      },
      {
        method: 'GET',
        path: '/v1/markets/:symbols',
        price: '$0.005',
        handler: 'MarketStatsController.getMarkets',
      },
      {
        method: 'GET',
        path: '/v1/ohlc/:symbol',
        price: '$0.005',
        handler: 'HistoryController.getOhlc',
      },
      {
        method: 'GET',
        path: '/v1/price-at/:symbol',
        price: '$0.003',
        handler: 'HistoryController.getPriceAt',
      },
      {
        method: 'GET',
        path: '/v1/stream/:symbols',
        price: '$0.0001',
        handler: 'StreamsController.stream',
        meteredUnit: 'update',
      },
      {
        method: 'GET',
        path: '/v1/ticker/:symbol',
        price: '$0.002',
        handler: 'TickersController.getTicker',
      },
      {
        method: 'GET',
        path: '/v1/tickers/:symbols',
        price: '$0.008',
        handler: 'TickersController.getTickers',
      },
    ]);
  });

  it('are given to @x402/core in USDC atomic units, to the configured receiver', () => {
    const table = app.get(X402Paywall).routeTable();
    const summary = Object.fromEntries(
      Object.entries(table).map(([route, config]) => [route, config.accepts]),
    );
    const usdc = {
      asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      extra: { name: 'USDC', version: '2' },
    };
    // X402_SCHEMES defaults to both schemes, at the same price
    const accepts = (amount: string) =>
      ['exact', 'batch-settlement'].map((scheme) => ({
        scheme,
        network: 'eip155:84532',
        payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        price: { amount, ...usdc },
        maxTimeoutSeconds: 60,
      }));
    expect(summary).toEqual({
      'GET /v1/all-tickers': accepts('10000'),
      'GET /v1/ohlc/:symbol': accepts('5000'),
      'GET /v1/price-at/:symbol': accepts('3000'),
      'GET /v1/markets/:symbols': accepts('5000'),
      // sold per update: only the scheme that can meter, its offer naming the unit
      'GET /v1/stream/:symbols': {
        scheme: 'batch-settlement',
        network: 'eip155:84532',
        payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        price: { amount: '100', ...usdc, extra: { ...usdc.extra, stream: { unit: 'update' } } },
        maxTimeoutSeconds: 60,
      },
      'GET /v1/ticker/:symbol': accepts('2000'),
      'GET /v1/tickers/:symbols': accepts('8000'),
    });
  });
});
