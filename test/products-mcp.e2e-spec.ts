import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { x402Client } from '@x402/fetch';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { attestationProblem, type PricedBody } from '../src/attestation/price-attestation.js';
import { MarketStatsService } from '../src/market-stats/market-stats.service.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';

const KEY = generatePrivateKey();
const SIGNER = privateKeyToAccount(KEY).address;
const HOUR = 3_600_000;

/** A tools/call result as the client receives it. */
interface ToolResult {
  readonly isError?: boolean;
  readonly content: readonly { text?: string }[];
  readonly structuredContent?: unknown;
  readonly _meta?: Record<string, unknown>;
}

interface OhlcBody {
  timestamp: string;
  currency: string;
  symbol: string;
  interval: string;
  candles: { time: string; close: number }[];
}

/** The point a candle answer's attestation signs: the candles' digest at the last close. */
function signedCandles(body: OhlcBody): PricedBody {
  const digest = createHash('sha256').update(JSON.stringify(body.candles)).digest('hex');
  return {
    timestamp: body.timestamp,
    currency: body.currency,
    price: { [`${body.symbol}:${body.interval}:${digest}`]: body.candles.at(-1)!.close },
  };
}

/** What each product's attestation signs, as a buyer checks it. */
function signedView(name: string, body: Record<string, unknown>): PricedBody {
  if (name === 'get_ohlc') return signedCandles(body as unknown as OhlcBody);
  if (name === 'get_markets') {
    const markets = body['markets'] as Record<string, { price: number }>;
    return {
      timestamp: body['timestamp'] as string,
      currency: body['currency'] as string,
      prices: Object.fromEntries(Object.entries(markets).map(([s, m]) => [s, m.price])),
    };
  }
  return body as unknown as PricedBody;
}

const iso = (ms: number): string => new Date(ms).toISOString();

describe('the market statistics and history products bought over MCP with the official x402 client', () => {
  let stack: PaidApp;
  let client: Client;
  let payer: x402Client;

  beforeAll(async () => {
    stack = await startPaidApp({
      env: { ATTESTATION_PRIVATE_KEY: KEY, MARKET_TIMEOUT_MS: '1500' },
    });
    await stack.service.app.get(MarketStatsService).refresh();
    // the stack's buyer, so its balance shows the price leave as the payee's shows it arrive
    payer = new x402Client().register('eip155:*', new ExactEvmScheme(stack.buyer.account));
    client = new Client({ name: 'products-mcp-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.service.url}/mcp`)));
  }, 120_000);

  afterAll(async () => {
    await client.close();
    await stack.close();
  });

  function call(
    name: string,
    args: Record<string, unknown>,
    meta?: Record<string, unknown>,
  ): Promise<ToolResult> {
    return client.callTool({
      name,
      arguments: args,
      ...(meta === undefined ? {} : { _meta: meta }),
    }) as Promise<ToolResult>;
  }

  it('takes the symbols as one comma-separated string and the history arguments as the routes do', async () => {
    const { tools } = await client.listTools();
    const schema = (name: string) =>
      tools.find((tool) => tool.name === name)?.inputSchema as {
        properties: Record<string, { type?: string }>;
        required?: string[];
      };
    expect(schema('get_markets').properties['symbols']?.type).toBe('string');
    expect(schema('get_markets').required).toEqual(['symbols']);
    expect(Object.keys(schema('get_ohlc').properties).sort()).toEqual([
      'end',
      'interval',
      'start',
      'symbol',
    ]);
    expect(Object.keys(schema('get_price_at').properties).sort()).toEqual(['symbol', 't']);
  });

  const t = Math.floor((Date.now() - 2 * HOUR) / 60_000) * 60_000 + 30_000;
  it.each([
    ['get_markets', { symbols: 'BTC,ETH' }, '/v1/markets/BTC,ETH', 5000n],
    ['get_ohlc', { symbol: 'BTC', interval: '1h' }, '/v1/ohlc/BTC?interval=1h', 5000n],
    ['get_price_at', { symbol: 'BTC', t: iso(t) }, `/v1/price-at/BTC?t=${iso(t)}`, 3000n],
  ] as const)(
    '%s sells what its HTTP route answers, signed, for exactly its price',
    async (name, args, path, price) => {
      const challenge = await call(name, args);
      expect(challenge.isError).toBe(true);
      const required = challenge.structuredContent as PaymentRequired;
      expect(required.resource.url).toBe(`mcp://tool/${name}`);
      expect(required.accepts.map(({ amount }) => BigInt(amount))).toContain(price);

      const before = await stack.balances();
      const paid = await call(name, args, {
        'x402/payment': await payer.createPaymentPayload(required),
      });
      expect(paid.isError).toBeFalsy();
      const after = await stack.balances();
      expect(after.payTo - before.payTo).toBe(price);
      expect(before.buyer - after.buyer).toBe(price);

      const body = paid.structuredContent as Record<string, unknown>;
      expect(JSON.parse(paid.content[0]?.text ?? '')).toEqual(body);
      const attestation = paid._meta?.['x402/price-attestation'];
      expect(typeof attestation).toBe('string');
      await expect(
        attestationProblem(attestation as string, signedView(name, body), SIGNER),
      ).resolves.toBeUndefined();

      // the same request over HTTP, bought the same way, answers the same figures
      const http = await stack.buyer.fetchV2(`${stack.service.url}${path}`);
      expect(http.status).toBe(200);
      const { timestamp, ...figures } = (await http.json()) as Record<string, unknown>;
      if (name === 'get_price_at') {
        // the moment's minute stamps it: the whole answer is the same
        expect(body).toEqual({ timestamp, ...figures });
      } else {
        // candles are stamped when the answer is made, markets by their price snapshot, which a
        // poll between the two purchases may renew; the fake venues' figures do not move
        expect(
          Math.abs(Date.parse(timestamp as string) - Date.parse(body['timestamp'] as string)),
        ).toBeLessThan(60_000);
        expect({ ...body, timestamp: undefined }).toEqual({ ...figures, timestamp: undefined });
      }
    },
  );

  const good = {
    get_markets: { symbols: 'BTC' },
    get_ohlc: { symbol: 'BTC', interval: '1h' },
    get_price_at: { symbol: 'BTC', t: iso(t) },
  } as const;
  it.each([
    [
      'get_markets',
      { symbols: Array.from({ length: 26 }, (_, i) => `A${i}`).join(',') },
      'invalid_symbol_list',
    ],
    ['get_markets', { symbols: 'BTC,NOPECOIN' }, 'unknown_symbol'],
    ['get_ohlc', { symbol: 'BTC', interval: '2h' }, 'bad_request'],
    ['get_ohlc', { symbol: 'NOPECOIN', interval: '1h' }, 'unknown_symbol'],
    ['get_price_at', { symbol: 'BTC', t: iso(Date.now() + HOUR) }, 'bad_request'],
    ['get_price_at', { symbol: 'BTC', t: 'yesterday' }, 'bad_request'],
  ] as const)(
    '%s %j is a tool error with the problem, no payment asked, a sent payment not taken',
    async (name, args, code) => {
      const before = await stack.balances();
      const refused = await call(name, args);
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ code });
      expect(JSON.stringify(refused.structuredContent)).not.toContain('accepts');

      // a valid payment for this tool, sent with the bad arguments, is refused the same way
      const offer = (await call(name, good[name])).structuredContent as PaymentRequired;
      const payment = await payer.createPaymentPayload(offer);
      const paid = await call(name, args, { 'x402/payment': payment });
      expect(paid.isError).toBe(true);
      expect(paid.structuredContent).toMatchObject({ code });
      expect(paid._meta?.['x402/payment-response']).toBeUndefined();
      expect(await stack.balances()).toEqual(before);
    },
  );
});
