import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { PriceChanges, type PriceChange } from '../src/aggregation/price-changes.js';
import { PriceRefreshService } from '../src/aggregation/price-refresh.service.js';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/app-config.js';
import { venueRequests } from '../src/markets/venue-definition.js';
import { builtInVenue } from '../src/markets/venues.js';
import { describeSandbox, type Sandbox } from '../scripts/sandbox.js';
import { priceWalkFrom } from '../scripts/sandbox-venues.js';
import { recordedUsdPrices } from './support/expected-prices.js';
import { FakeMarkets } from './support/fake-markets.js';
import { startOfflineSandbox } from './support/offline-sandbox.js';
import { FakeStreams } from './support/fake-streams.js';
import { isStablecoinInstrument, PriceWalk } from './support/price-walk.js';

const COINBASE_PRODUCTS = venueRequests(builtInVenue('coinbase'))[0]!.path;

interface CoinbaseProducts {
  products: { product_id: string; price: string }[];
}

async function coinbasePrice(markets: FakeMarkets, product: string): Promise<number> {
  const response = await fetch(`${markets.venue('coinbase').url}${COINBASE_PRODUCTS}`);
  const body = (await response.json()) as CoinbaseProducts;
  const row = body.products.find((candidate) => candidate.product_id === product);
  if (row === undefined) throw new Error(`${product} is not in the coinbase replay`);
  return Number(row.price);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PriceWalk', () => {
  it('repeats itself for a seed and differs for another', () => {
    const walk = (seed: number) => {
      const steps = new PriceWalk({ seed });
      return Array.from({ length: 50 }, () => steps.step().factor);
    };
    expect(walk(7)).toEqual(walk(7));
    expect(walk(7)).not.toEqual(walk(8));
  });

  it('moves by one step at a time and never leaves its bound', () => {
    const walk = new PriceWalk({ seed: 3, stepBps: 5, boundBps: 20 });
    let before = walk.factor;
    const seen = new Set<number>();
    for (let i = 0; i < 5000; i += 1) {
      const { factor } = walk.step();
      expect(Math.round(Math.abs(factor - before) * 10_000)).toBe(5);
      expect(Math.abs(factor - 1)).toBeLessThanOrEqual(0.002 + 1e-12);
      seen.add(Math.round((factor - 1) * 10_000));
      before = factor;
    }
    // it reaches both bounds
    expect([...seen].sort((a, b) => a - b)).toEqual([-20, -15, -10, -5, 0, 5, 10, 15, 20]);
  });

  it('refuses a step of nothing or a bound below one step', () => {
    expect(() => new PriceWalk({ stepBps: 0 })).toThrow(RangeError);
    expect(() => new PriceWalk({ stepBps: 10, boundBps: 5 })).toThrow(RangeError);
  });

  it('is on for npm start unless SANDBOX_PRICE_WALK=off, and refuses anything else', () => {
    expect(priceWalkFrom(undefined)).toBeInstanceOf(PriceWalk);
    expect(priceWalkFrom(' ON ')).toBeInstanceOf(PriceWalk);
    expect(priceWalkFrom('off')).toBeUndefined();
    expect(() => priceWalkFrom('sometimes')).toThrow(
      'SANDBOX_PRICE_WALK must be on or off (got "sometimes")',
    );
  });

  it('knows the stablecoins by every venue’s name for them', () => {
    for (const name of ['USDT-USD', 'USDTZUSD', 'usdcusd', 'USDC/USD', 'tether', 'usd-coin']) {
      expect(isStablecoinInstrument(name)).toBe(true);
    }
    for (const name of ['BTC-USD', 'XXBTZUSD', 'BTCUSDT', 'bitcoin', 'ETH-USDC']) {
      expect(isStablecoinInstrument(name)).toBe(false);
    }
  });
});

describe('recorded venues following a walk', () => {
  it('answer their recorded prices times the walk, stablecoins unmoved; without a walk, as recorded', async () => {
    const still = await FakeMarkets.start({ venues: ['coinbase'] });
    const walk = new PriceWalk({ seed: 11 });
    const moving = await FakeMarkets.start({ venues: ['coinbase'], walk });
    try {
      const recordedBtc = await coinbasePrice(still, 'BTC-USD');
      const recordedUsdt = await coinbasePrice(still, 'USDT-USD');
      for (let i = 0; i < 7; i += 1) walk.step();
      expect(walk.factor).not.toBe(1);
      expect(await coinbasePrice(moving, 'BTC-USD')).toBeCloseTo(recordedBtc * walk.factor, 6);
      expect(await coinbasePrice(moving, 'USDT-USD')).toBe(recordedUsdt);
      expect(await coinbasePrice(still, 'BTC-USD')).toBe(recordedBtc);
    } finally {
      await Promise.all([still.close(), moving.close()]);
    }
  });

  it('push every move on their ticker streams at once', async () => {
    const walk = new PriceWalk({ seed: 5 });
    // a tick far away: only a move can send a message within the test
    const streams = await FakeStreams.start(['binance'], 60_000, walk);
    const socket = new WebSocket(`${streams.stream('binance').url}/ws/!miniTicker@arr`);
    try {
      const prices: number[] = [];
      socket.on('message', (data: Buffer) => {
        const tickers = JSON.parse(data.toString()) as { s: string; c: string }[];
        const btc = tickers.find((ticker) => ticker.s === 'BTCUSDT');
        if (btc !== undefined) prices.push(Number(btc.c));
      });
      await new Promise((resolve) => socket.once('open', resolve));
      while (streams.stream('binance').openConnections === 0) await sleep(5);
      const first = walk.step();
      const second = walk.step();
      while (prices.length < 2) await sleep(5);
      expect(prices[1]! / prices[0]!).toBeCloseTo(second.factor / first.factor, 9);
    } finally {
      socket.terminate();
      await streams.close();
    }
  });
});

describe('the service on venues following a walk', () => {
  let markets: FakeMarkets;
  let streams: FakeStreams;
  let app: NestFastifyApplication;
  const walk = new PriceWalk({ seed: 42, intervalMs: 100 });

  beforeAll(async () => {
    markets = await FakeMarkets.start({ walk });
    streams = await FakeStreams.start(undefined, undefined, walk);
    const config = loadConfig({
      ...markets.env(),
      ...streams.env(),
      LOG_LEVEL: 'error',
      X402_PAY_TO: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      X402_FACILITATOR: 'embedded',
      X402_SETTLER_PRIVATE_KEY:
        '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
      X402_RPC_URL: 'http://127.0.0.1:9',
    });
    app = await createApp({ config, logger: false });
    await app.init();
  }, 60_000);

  afterAll(async () => {
    walk.stop();
    await app.close();
    await streams.close();
    await markets.close();
  });

  it('publishes changes of the aggregated price, each within the walk’s bound of the recorded one', async () => {
    const recorded = (await app.get(PriceRefreshService).refresh()).prices.get('BTC');
    expect(recorded).toBeDefined();
    const changes: PriceChange[] = [];
    const stop = app.get(PriceChanges).subscribe(['BTC'], (change) => changes.push(change));
    walk.start();
    const deadline = Date.now() + 20_000;
    while (changes.length < 3 && Date.now() < deadline) await sleep(20);
    stop();
    expect(changes.length).toBeGreaterThanOrEqual(3);
    for (const change of changes) {
      expect(change.symbol).toBe('BTC');
      expect(change.venues).toBeGreaterThanOrEqual(2);
      // within 1 % of the recorded aggregate, plus the served rounding (one cent)
      expect(Math.abs(change.price / recorded!.price - 1)).toBeLessThanOrEqual(0.01 + 1e-6);
    }
    // a change is a new price: never the one before it (the walk may come back to an older one)
    for (const [index, change] of changes.entries()) {
      if (index > 0) expect(change.price).not.toBe(changes[index - 1]?.price);
    }
  }, 30_000);
});

describe('npm start / npm run sandbox with moving prices (a seeded price walk)', () => {
  let sandbox: Sandbox;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'sandbox-walk-'));
    sandbox = await startOfflineSandbox(
      path.join(dir, '.sandbox.json'),
      new PriceWalk({ seed: 9, intervalMs: 100 }),
    );
  });

  afterAll(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('moves each recorded venue’s own answer within ±1 % of the recording, and says so', async () => {
    const recorded = recordedUsdPrices('BTC').coinbase;
    const coinbase = sandbox.markets?.venue('coinbase').url;
    const btc = async (): Promise<number> => {
      const body = (await (await fetch(`${coinbase}/api/v3/brokerage/market/products`)).json()) as {
        products: { product_id: string; price: string }[];
      };
      return Number(body.products.find((row) => row.product_id === 'BTC-USD')?.price);
    };
    const seen = new Set<number>();
    for (let i = 0; i < 5; i += 1) {
      const price = await btc();
      expect(Math.abs(price / recorded - 1)).toBeLessThanOrEqual(0.01 + 1e-9);
      seen.add(price);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(seen.size).toBeGreaterThan(1);
    expect(describeSandbox(sandbox)).toContain('moving ±0.05 % every 100 ms within ±1 %');
  });
});
