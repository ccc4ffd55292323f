import { createHash } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { verifyTypedData } from 'viem';
import {
  PRICE_ATTESTATION_HEADER,
  attestationProblem,
  decodePriceAttestation,
  fixedPointPrice,
  priceAttestationTypedData,
  type PricedBody,
} from '../src/attestation/price-attestation.js';
import {
  CANDLE_REPLAYS,
  GEMINI_RECENT,
  recordedCandles,
  replayedIndex,
  setCandleFault,
} from './support/fake-candles.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { USDC } from './support/paying-clients.js';
import { EXIT_OK, parseCommand, runClient } from '../scripts/client.js';

const KEY = generatePrivateKey();
const SIGNER = privateKeyToAccount(KEY).address;
const MINUTE = 60_000;
const HOUR = 3_600_000;
const ALL = ['binance', 'bitstamp', 'bybit', 'coinbase', 'gemini', 'kraken', 'kucoin', 'okx'];

interface CandleBody {
  time: string;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  volumeUsd: number;
  venues: string[];
  closed: boolean;
}
interface OhlcBody {
  timestamp: string;
  currency: string;
  symbol: string;
  interval: string;
  start: string;
  end: string;
  from: string;
  candles: CandleBody[];
  digest: string;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The candle the fake venues' fixtures make at `start`, computed here from the fixtures alone. */
function expectedCandle(start: number, stepMs: number, venues: readonly string[]) {
  const rows = venues.map((venue) => {
    const recorded = recordedCandles(venue);
    return recorded[replayedIndex(start, stepMs, recorded.length)]!;
  });
  return {
    open: median(rows.map((row) => row.open)),
    high: median(rows.map((row) => row.high)),
    low: median(rows.map((row) => row.low)),
    close: median(rows.map((row) => row.close)),
    volume: rows.reduce((sum, row) => sum + row.volume, 0),
  };
}

function expectCandleMatches(candle: CandleBody, stepMs: number, venues: readonly string[]): void {
  const expected = expectedCandle(Date.parse(candle.time), stepMs, venues);
  expect(candle.venues).toEqual([...venues].sort());
  for (const key of ['open', 'high', 'low', 'close', 'volume'] as const) {
    expect(candle[key]).toBeCloseTo(expected[key], 6);
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();
const seconds = (ms: number): string => String(Math.floor(ms / 1000));

describe('history: candles and the price at a moment, bought over x402', () => {
  let stack: PaidApp;

  beforeAll(async () => {
    stack = await startPaidApp({
      env: { ATTESTATION_PRIVATE_KEY: KEY, MARKET_TIMEOUT_MS: '1500' },
    });
  }, 120_000);

  afterAll(async () => {
    await stack.close();
  });

  /** Candle calls the fake venues have answered so far. */
  function candleCalls(): number {
    let calls = 0;
    for (const [id, venue] of stack.markets.venues) {
      const prefix = CANDLE_REPLAYS[id]?.prefix;
      if (prefix !== undefined)
        calls += venue.requests.filter((path) => path.startsWith(prefix)).length;
    }
    return calls;
  }

  function buy(path: string): Promise<Response> {
    return stack.buyer.fetchV2(`${stack.service.url}${path}`);
  }

  it('sells the last 24 hours at 1h: 23 closed candles and the open one, medians of the fixtures, signed', async () => {
    const before = await stack.balances();
    const response = await buy(`/v1/ohlc/btc?interval=1h&start=${seconds(Date.now() - 23 * HOUR)}`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as OhlcBody;
    expect(body).toMatchObject({
      currency: 'USD',
      symbol: 'BTC',
      interval: '1h',
      from: body.start,
    });
    expect(body.candles).toHaveLength(24);
    expect(body.candles.map((candle) => candle.closed)).toEqual([
      ...Array<boolean>(23).fill(true),
      false,
    ]);
    for (const [index, candle] of body.candles.entries()) {
      expect(Date.parse(candle.time)).toBe(Date.parse(body.start) + index * HOUR);
      expect(candle.low).toBeLessThanOrEqual(Math.min(candle.open, candle.close));
      expect(candle.high).toBeGreaterThanOrEqual(Math.max(candle.open, candle.close));
      expectCandleMatches(candle, HOUR, ALL);
    }
    const after = await stack.balances();
    expect(before.buyer - after.buyer).toBe(5000n);

    const digest = createHash('sha256').update(JSON.stringify(body.candles)).digest('hex');
    expect(body.digest).toBe(digest);
    const { message, signature } = decodePriceAttestation(
      response.headers.get(PRICE_ATTESTATION_HEADER) ?? '',
    );
    await expect(
      verifyTypedData({ address: SIGNER, ...priceAttestationTypedData(message), signature }),
    ).resolves.toBe(true);
    const last = body.candles[23]!;
    expect(message.prices).toEqual([
      { symbol: `BTC:1h:${digest}`, price: fixedPointPrice(last.close), venues: 8, spreadBps: 0 },
    ]);
    expect(message.timestamp).toBe(BigInt(Date.parse(last.time)));
  });

  it('sells the price at a moment: its minute’s median close within that minute’s band, signed as a ticker', async () => {
    const t = Math.floor((Date.now() - 2 * HOUR) / MINUTE) * MINUTE + 30_000;
    const response = await buy(`/v1/price-at/BTC?t=${iso(t)}`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as PricedBody & {
      t: string;
      resolution: string;
      band: { low: number; high: number };
      venues: string[];
    };
    const minute = t - 30_000;
    // Gemini serves its last 60 minutes only: two hours ago it has no candle and does not count
    expect(GEMINI_RECENT).toBeLessThan(120);
    const venues = ALL.filter((venue) => venue !== 'gemini');
    const expected = expectedCandle(minute, MINUTE, venues);
    expect(body).toMatchObject({ timestamp: iso(minute), t: iso(t), resolution: '1m', venues });
    expect(body.price?.BTC).toBeCloseTo(expected.close, 6);
    expect(body.band.low).toBeCloseTo(expected.low, 6);
    expect(body.band.high).toBeCloseTo(expected.high, 6);
    expect(body.price?.BTC).toBeGreaterThanOrEqual(body.band.low);
    expect(body.price?.BTC).toBeLessThanOrEqual(body.band.high);
    await expect(
      attestationProblem(response.headers.get(PRICE_ATTESTATION_HEADER), body, SIGNER),
    ).resolves.toBeUndefined();
  });

  it('asks the venues once for an unpaid 402 and its paid retry, and not at all for a second identical purchase', async () => {
    const path = `/v1/ohlc/BTC?interval=15m&start=${iso(Date.now() - 48 * HOUR)}&end=${iso(Date.now() - 40 * HOUR)}`;
    const before = candleCalls();
    const first = await buy(path);
    expect(first.status).toBe(200);
    // one round: one call to each venue serving 15m, shared by the 402 and the paid request
    expect(candleCalls() - before).toBe(8);
    const kept = candleCalls();
    const second = await buy(path);
    expect(second.status).toBe(200);
    expect(candleCalls()).toBe(kept);
    expect(((await second.json()) as OhlcBody).candles).toEqual(
      ((await first.json()) as OhlcBody).candles,
    );
  });

  it('a hanging venue and one ten times too high cannot move a candle', async () => {
    setCandleFault(stack.markets.venue('okx'), { kind: 'hang' });
    setCandleFault(stack.markets.venue('binance'), { kind: 'scale', factor: 10 });
    try {
      const response = await buy(
        `/v1/ohlc/BTC?interval=1h&start=${iso(Date.now() - 40 * HOUR)}&end=${iso(Date.now() - 30 * HOUR)}`,
      );
      expect(response.status).toBe(200);
      const body = (await response.json()) as OhlcBody;
      expect(body.candles).toHaveLength(11);
      const honest = ALL.filter((venue) => venue !== 'okx' && venue !== 'binance');
      for (const candle of body.candles) expectCandleMatches(candle, HOUR, honest);
    } finally {
      setCandleFault(stack.markets.venue('okx'), undefined);
      setCandleFault(stack.markets.venue('binance'), undefined);
    }
  });

  it('serves the candles that exist of a range partly before any venue’s history, saying from when', async () => {
    const response = await buy(`/v1/ohlc/BTC?interval=4h&start=${iso(Date.now() - 9 * 24 * HOUR)}`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as OhlcBody;
    expect(Date.parse(body.from)).toBeGreaterThan(Date.parse(body.start));
    expect(Date.parse(body.from)).toBeGreaterThanOrEqual(Date.now() - 7 * 24 * HOUR - 4 * HOUR);
    expect(body.candles[0]?.time).toBe(body.from);
  });

  it.each([
    [['ohlc', 'BTC', '1h'], '/v1/ohlc/BTC?interval=1h'],
    [
      ['ohlc', 'eth', '1d', '2026-11-01T00:00:00Z'],
      '/v1/ohlc/eth?interval=1d&start=2026-11-01T00%3A00%3A00Z',
    ],
    [['price-at', 'BTC', '2026-01-01T00:00:00Z'], '/v1/price-at/BTC?t=2026-01-01T00%3A00%3A00Z'],
  ])('npm run client -- %j buys %s', (argv, path) => {
    expect(parseCommand(argv)).toEqual({ kind: 'request', path });
  });

  it.each([[['ohlc']], [['price-at', 'BTC']], [['ohlc', 'BTC', '1h', 'a', 'b', 'c']]])(
    'npm run client -- %j is a usage error',
    (argv) => {
      expect(parseCommand(argv).kind).toBe('invalid');
    },
  );

  it.each([[['ohlc', 'BTC', '1h']], [['price-at', 'BTC', seconds(Date.now() - 3 * HOUR)]]])(
    'npm run client -- %j buys it and checks its attestation',
    async (argv) => {
      const key = generatePrivateKey();
      await stack.chain.mintUsdc(privateKeyToAccount(key).address, USDC);
      const out: string[] = [];
      const code = await runClient(argv, {
        apiUrl: stack.service.url,
        privateKey: key,
        stateFile: '/nonexistent',
        out: (text) => out.push(text),
        err: (text) => out.push(text),
      });
      expect(out.join('\n')).toContain(`attestation ok (signer ${SIGNER})`);
      expect(code).toBe(EXIT_OK);
    },
  );

  describe('refuses before any 402, nothing charged', () => {
    const future = () => iso(Date.now() + HOUR);
    it.each([
      [
        'start after end',
        () => `/v1/ohlc/BTC?start=${iso(Date.now() - HOUR)}&end=${iso(Date.now() - 2 * HOUR)}`,
        400,
      ],
      ['a future start', () => `/v1/ohlc/BTC?start=${future()}`, 400],
      ['a future t', () => `/v1/price-at/BTC?t=${future()}`, 400],
      ['an interval not offered', () => '/v1/ohlc/BTC?interval=2h', 400],
      [
        'more than 500 candles',
        () => `/v1/ohlc/BTC?interval=1m&start=${seconds(Date.now() - 600 * MINUTE)}`,
        400,
      ],
      ['a malformed time', () => '/v1/price-at/BTC?t=yesterday', 400],
      ['a missing t', () => '/v1/price-at/BTC', 400],
      ['a malformed symbol', () => '/v1/ohlc/BTC-USD', 400],
      ['an unknown symbol', () => '/v1/ohlc/NOPECOIN', 404],
      [
        'an unknown symbol at a moment',
        () => `/v1/price-at/NOPECOIN?t=${seconds(Date.now() - HOUR)}`,
        404,
      ],
    ])('%s', async (_what, path, status) => {
      const before = await stack.balances();
      const calls = candleCalls();
      const response = await buy(path());
      expect(response.status).toBe(status);
      expect(response.headers.get('payment-required')).toBeNull();
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await stack.balances()).toEqual(before);
      expect(candleCalls()).toBe(calls);
    });

    it('a range no venue has candles for: 400, nothing charged', async () => {
      const before = await stack.balances();
      // the fixtures record BTC only: every venue answers ETH with no candles
      const response = await buy('/v1/ohlc/ETH?interval=1h');
      expect(response.status).toBe(400);
      expect(response.headers.get('payment-required')).toBeNull();
      expect(await response.json()).toMatchObject({
        code: 'bad_request',
        detail: expect.stringMatching(/^No venue has ETH 1h candles from /) as unknown,
      });
      expect(await stack.balances()).toEqual(before);
    });

    it('every venue unreachable: 503, nothing charged', async () => {
      for (const id of ALL) setCandleFault(stack.markets.venue(id), { kind: 'down' });
      try {
        const before = await stack.balances();
        const response = await buy(
          `/v1/ohlc/BTC?interval=5m&start=${iso(Date.now() - 30 * HOUR)}&end=${iso(Date.now() - 29 * HOUR)}`,
        );
        expect(response.status).toBe(503);
        expect(response.headers.get('payment-required')).toBeNull();
        expect(await response.json()).toMatchObject({ code: 'price_unavailable' });
        expect(await stack.balances()).toEqual(before);
      } finally {
        for (const id of ALL) setCandleFault(stack.markets.venue(id), undefined);
      }
    });
  });
});
