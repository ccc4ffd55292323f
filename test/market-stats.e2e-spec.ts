import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { EXIT_OK, runClient } from '../scripts/client.js';
import {
  PRICE_ATTESTATION_HEADER,
  attestationProblem,
} from '../src/attestation/price-attestation.js';
import { MarketStatsService } from '../src/market-stats/market-stats.service.js';
import { expectRelativelyClose } from './support/expected-prices.js';
import { OpenApiContract } from './support/openapi-contract.js';
import { requirementFor, responseJson, startPaidApp, type PaidApp } from './support/paid-app.js';
import { expectedFigures, recordedMarketCap } from './support/recorded-stats.js';
import { USDC } from './support/paying-clients.js';
import { paymentRequiredOf, signedPayment, v2Header } from './support/x402-payloads.js';

const KEY = generatePrivateKey();
const SIGNER = privateKeyToAccount(KEY).address;
const contract = new OpenApiContract();

interface Market {
  price: number;
  open24h: number | null;
  high24h: number | null;
  low24h: number | null;
  change24h: number | null;
  changePct24h: number | null;
  volume24h: number | null;
  volumeUsd24h: number | null;
  venues: number;
  spreadBps: number;
  marketCapUsd: number | null;
}
interface MarketsBody {
  timestamp: string;
  currency: string;
  markets: Record<string, Market>;
}

describe('GET /v1/markets/{symbols} (getMarkets) over live (fake) venues', () => {
  let stack: PaidApp;

  beforeAll(async () => {
    stack = await startPaidApp({ env: { ATTESTATION_PRIVATE_KEY: KEY } });
    await stack.service.app.get(MarketStatsService).refresh();
  }, 120_000);

  afterAll(async () => {
    await stack.close();
  });

  it('asks USD 0.005 in its 402', async () => {
    const response = await stack.service.get('/v1/markets/BTC,ETH');
    expect(response.status).toBe(402);
    expect(paymentRequiredOf(response).accepts.map((accepted) => accepted.amount)).toEqual([
      '5000',
      '5000',
    ]);
  });

  it('sells the figures the recorded statistics make, signed, at the tickers’ prices', async () => {
    const before = await stack.balances();
    const response = await stack.buyer.fetchV2(`${stack.service.url}/v1/markets/btc,ETH`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as MarketsBody;
    contract.assertResponse('getMarkets', 200, 'application/json', body);
    const after = await stack.balances();
    expect(before.buyer - after.buyer).toBe(5000n);

    expect(Object.keys(body.markets)).toEqual(['BTC', 'ETH']);
    const prices = Object.fromEntries(
      Object.entries(body.markets).map(([symbol, market]) => [symbol, market.price]),
    );
    const header = response.headers.get(PRICE_ATTESTATION_HEADER);
    await expect(
      attestationProblem(header, { timestamp: body.timestamp, currency: 'USD', prices }, SIGNER),
    ).resolves.toBeUndefined();

    const tickers = await stack.buyer.fetchV2(`${stack.service.url}/v1/tickers/BTC,ETH,USDT,USDC`);
    const quoted = (await tickers.json()) as { prices: Record<string, number> };
    expect(prices).toEqual({ BTC: quoted.prices.BTC, ETH: quoted.prices.ETH });
    const rates = { USDT: quoted.prices.USDT!, USDC: quoted.prices.USDC! };

    for (const [symbol, id] of [
      ['BTC', 'bitcoin'],
      ['ETH', 'ethereum'],
    ] as const) {
      const market = body.markets[symbol]!;
      const expected = expectedFigures(symbol, rates);
      expect(market.venues).toBe(expected.venues);
      // the rates bought are rounded to 6 digits: the service converts at full precision
      expectRelativelyClose(market.open24h!, expected.open24h, 2e-5);
      expectRelativelyClose(market.high24h!, expected.high24h, 2e-5);
      expectRelativelyClose(market.low24h!, expected.low24h, 2e-5);
      expectRelativelyClose(market.volume24h!, expected.volume24h, 1e-9);
      expectRelativelyClose(market.volumeUsd24h!, expected.volumeUsd24h, 2e-5);
      expect(market.marketCapUsd).toBe(Math.round(recordedMarketCap(id)));
      expect(market.low24h!).toBeLessThanOrEqual(market.price);
      expect(market.price).toBeLessThanOrEqual(market.high24h!);
      expect(market.change24h).toBeCloseTo(market.price - market.open24h!, 6);
      expect(market.changePct24h).toBeCloseTo((market.change24h! / market.open24h!) * 100, 2);
      expect(Number.isInteger(market.spreadBps)).toBe(true);
    }
  });

  it.each([
    [
      '26 symbols',
      Array.from({ length: 26 }, (_, i) => `A${i}`).join(','),
      400,
      'invalid_symbol_list',
    ],
    ['a duplicate', 'BTC,btc', 400, 'invalid_symbol_list'],
    ['an empty item', 'BTC,,ETH', 400, 'invalid_symbol_list'],
    ['a malformed symbol', 'BTC,ET$H', 400, 'invalid_symbol'],
    ['an unknown symbol', 'BTC,NOPECOIN', 404, 'unknown_symbol'],
  ])(
    '%s is refused before any 402, a sent payment not taken',
    async (_what, list, status, code) => {
      const before = await stack.balances();
      const path = `/v1/markets/${encodeURIComponent(list).replaceAll('%2C', ',')}`;
      const refused = await stack.buyer.fetchV2(`${stack.service.url}${path}`);
      expect(refused.status).toBe(status);
      expect(refused.headers.get('payment-required')).toBeNull();
      expect(await responseJson(refused)).toMatchObject({ code });

      const offer = await requirementFor(stack, '/v1/markets/BTC');
      const paid = await stack.service.get(path, {
        headers: v2Header(await signedPayment(stack.buyer.account, offer)),
      });
      expect(paid.status).toBe(status);
      expect(paid.headers.get('payment-response')).toBeNull();
      expect(await stack.balances()).toEqual(before);
    },
  );

  it('is bought by `npm run client -- markets BTC,ETH`, which checks its attestation', async () => {
    const key = generatePrivateKey();
    await stack.chain.mintUsdc(privateKeyToAccount(key).address, USDC);
    const out: string[] = [];
    const err: string[] = [];
    const code = await runClient(['markets', 'BTC,ETH'], {
      apiUrl: stack.service.url,
      privateKey: key,
      stateFile: '/nonexistent',
      out: (text) => out.push(text),
      err: (text) => err.push(text),
    });
    expect({ code, err: err.join('\n') }).toEqual({ code: EXIT_OK, err: '' });
    const printed = out.join('\n');
    expect(printed).toContain('"open24h"');
    expect(printed).toContain('paid 0.005 USDC (5000 atomic)');
    expect(printed).toContain(`attestation ok (signer ${SIGNER})`);
  });
});
