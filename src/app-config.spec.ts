import {
  BASE_CHAINLINK_UPDATE_RULES,
  BASE_CHAINLINK_USD_FEEDS,
} from './markets/chainlink-feeds.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../test/support/project-root.js';
import { SETTINGS_SECTIONS, loadConfig as loadConfigFrom } from './app-config.js';
import { ConfigError, variableNames } from './config/settings.js';
import { BUILT_IN_VENUE_IDS, STREAMING_VENUE_IDS } from './markets/venues.js';

const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const SETTLER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

/** The one variable without a default, plus whatever a case sets. */
function loadConfig(env: Record<string, string>) {
  return loadConfigFrom({ X402_PAY_TO: PAY_TO, ...env });
}

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('has working defaults for an empty environment', () => {
    expect(loadConfig({})).toEqual({
      http: {
        port: 3000,
        host: '0.0.0.0',
        requestTimeoutMs: 15_000,
        keepAliveTimeoutMs: 5000,
        maxConnections: 1024,
      },
      logLevel: 'log',
      logFormat: 'text',
      metricsToken: undefined,
      markets: {
        enabled: BUILT_IN_VENUE_IDS,
        baseUrls: {},
        timeoutMs: 4000,
        apiKeys: {},
        streams: STREAMING_VENUE_IDS,
        streamUrls: {},
        streamQuietMs: 10_000,
      },
      chainlink: undefined,
      marketStats: { refreshMs: 30_000, staleMs: 300_000 },
      history: { venueCalls: 16 },
      assets: undefined,
      attestation: { enabled: true, privateKey: undefined },
      pricing: {
        refreshMs: 1000,
        staleMs: 60_000,
        minSources: 2,
        maxDeviation: 0.02,
        outlierFloor: 0.005,
        madMultiplier: 5,
        volumeWeighted: false,
      },
      payments: {
        payTo: PAY_TO,
        networks: [
          {
            network: 'eip155:84532',
            chainId: 84532,
            asset: {
              address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
              name: 'USDC',
              version: '2',
              decimals: 6,
            },
            rpcUrl: undefined,
            facilitatorUrl: undefined,
          },
        ],
        facilitator: { mode: 'remote', url: 'https://x402.org/facilitator', timeoutMs: 15_000 },
        publicUrl: undefined,
        maxTimeoutSeconds: 60,
        settleTimeoutMs: 15_000,
        verifyTimeoutMs: 10_000,
        // batch-settlement is opt-in
        schemes: ['exact'],
      },
      batchSettlement: {
        settleIntervalMs: 60_000,
        claimThreshold: 1_000_000n,
        dataDir: 'data/batch-settlement',
        authorizerPrivateKey: undefined,
      },
      sharedState: { redisUrl: undefined },
      rateLimits: { windowMs: 60_000, free: 600, unpaid: 120, trustProxy: false },
      mcp: { perClient: 8, total: 256, deadlineMs: 30_000 },
      streams: {
        perPayer: 5,
        perInstance: 512,
        perClient: 10,
        idleMs: 300_000,
        unchargedMs: 60_000,
        stallMs: 15_000,
        maxBudget: 1_000_000n,
        topUpWaitMs: 30_000,
        keepAliveMs: 15_000,
      },
    });
  });

  it.each([
    ['true', true],
    ['10.0.0.0/8, 127.0.0.1', ['10.0.0.0/8', '127.0.0.1']],
  ] as const)('reads TRUST_PROXY=%s', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).rateLimits.trustProxy).toEqual(expected);
  });

  it('reads REDIS_URL, and refuses anything but redis:// or rediss:// without echoing it', () => {
    expect(loadConfig({ REDIS_URL: 'redis://:pw@127.0.0.1:6379/0' }).sharedState).toEqual({
      redisUrl: 'redis://:pw@127.0.0.1:6379/0',
    });
    expect(loadConfig({ REDIS_URL: 'rediss://cache.example:6380' }).sharedState.redisUrl).toBe(
      'rediss://cache.example:6380',
    );
    const problems = problemsOf({ REDIS_URL: 'http://user:hunter2@cache.example' });
    expect(problems).toEqual(['REDIS_URL must be a redis:// or rediss:// URL']);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      HTTP_REQUEST_TIMEOUT_MS: '5000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '65000',
      HTTP_MAX_CONNECTIONS: '200',
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'json',
      METRICS_TOKEN: 'scrape-me-please-0123',
      MARKETS: 'Kraken, bitstamp',
      MARKET_KRAKEN_URL: 'http://127.0.0.1:9001/',
      MARKET_TIMEOUT_MS: '1500',
      ASSETS: 'btc,eth',
      PRICE_REFRESH_MS: '1000',
      PRICE_STALE_MS: '30000',
      PRICE_MIN_SOURCES: '1',
      PRICE_MAX_DEVIATION: '0.05',
      PRICE_OUTLIER_FLOOR: '0.001',
      PRICE_MAD_MULTIPLIER: '3',
      PRICE_VOLUME_WEIGHTED: 'true',
      COINGECKO_API_KEY: 'CG-demo-key',
      MARKET_KRAKEN_STREAM_URL: 'ws://127.0.0.1:9101/',
      MARKET_STREAM_QUIET_MS: '3000',
      MARKET_STATS_REFRESH_MS: '10000',
      MARKET_STATS_STALE_MS: '60000',
      HISTORY_VENUE_CALLS: '4',
      CHAINLINK_RPC_URL: 'http://127.0.0.1:8545',
      CHAINLINK_FEEDS:
        'eth=0x71041dddad3595f9ced3dccfbe3d1f4b0a16bb70:1200:0.15, BTC=0x64c911996D3c6aC71f9b455B1E8E7266BcbD848F',
      REDIS_URL: 'redis://127.0.0.1:6379',
      ATTESTATION_PRIVATE_KEY: `0x${'ab'.repeat(32)}`,
      MCP_MAX_EXCHANGES_PER_CLIENT: '4',
      MCP_MAX_EXCHANGES: '64',
      MCP_EXCHANGE_DEADLINE_MS: '10000',
      STREAM_MAX_PER_PAYER: '2',
      STREAM_MAX_PER_INSTANCE: '100',
      STREAM_MAX_PER_CLIENT: '3',
      STREAM_IDLE_MS: '60000',
      STREAM_UNCHARGED_MS: '20000',
      STREAM_STALL_MS: '4000',
      STREAM_MAX_BUDGET: '50000',
      STREAM_TOPUP_WAIT_MS: '5000',
      STREAM_KEEPALIVE_MS: '1000',
    });
    expect({ ...config, payments: undefined }).toEqual({
      payments: undefined,
      batchSettlement: {
        settleIntervalMs: 60_000,
        claimThreshold: 1_000_000n,
        dataDir: 'data/batch-settlement',
        authorizerPrivateKey: undefined,
      },
      attestation: { enabled: true, privateKey: `0x${'ab'.repeat(32)}` },
      sharedState: { redisUrl: 'redis://127.0.0.1:6379' },
      rateLimits: { windowMs: 60_000, free: 600, unpaid: 120, trustProxy: false },
      mcp: { perClient: 4, total: 64, deadlineMs: 10_000 },
      streams: {
        perPayer: 2,
        perInstance: 100,
        perClient: 3,
        idleMs: 60_000,
        unchargedMs: 20_000,
        stallMs: 4000,
        maxBudget: 50_000n,
        topUpWaitMs: 5000,
        keepAliveMs: 1000,
      },
      http: {
        port: 8080,
        host: '127.0.0.1',
        requestTimeoutMs: 5000,
        keepAliveTimeoutMs: 65_000,
        maxConnections: 200,
      },
      logLevel: 'debug',
      logFormat: 'json',
      metricsToken: 'scrape-me-please-0123',
      markets: {
        enabled: ['kraken', 'bitstamp'],
        baseUrls: { kraken: 'http://127.0.0.1:9001' },
        timeoutMs: 1500,
        apiKeys: { coingecko: 'CG-demo-key' },
        streams: ['kraken'],
        streamUrls: { kraken: 'ws://127.0.0.1:9101' },
        streamQuietMs: 3000,
      },
      chainlink: {
        rpcUrl: 'http://127.0.0.1:8545',
        feeds: {
          ETH: '0x71041dddad3595F9CEd3DcCFBe3D1F4b0a16Bb70',
          BTC: '0x64c911996D3c6aC71f9b455B1E8E7266BcbD848F',
        },
        updateRules: { ETH: { heartbeatMs: 1_200_000, deviation: 0.0015 } },
      },
      marketStats: { refreshMs: 10_000, staleMs: 60_000 },
      history: { venueCalls: 4 },
      assets: ['BTC', 'ETH'],
      pricing: {
        refreshMs: 1000,
        staleMs: 30_000,
        minSources: 1,
        maxDeviation: 0.05,
        outlierFloor: 0.001,
        madMultiplier: 3,
        volumeWeighted: true,
      },
    });
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ PORT: '', MARKETS: ' ' }).http.port).toBe(3000);
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '80.5' }, 'PORT'],
    [{ HTTP_REQUEST_TIMEOUT_MS: '10' }, 'HTTP_REQUEST_TIMEOUT_MS'],
    [{ HTTP_KEEP_ALIVE_TIMEOUT_MS: 'forever' }, 'HTTP_KEEP_ALIVE_TIMEOUT_MS'],
    [{ HTTP_MAX_CONNECTIONS: '0' }, 'HTTP_MAX_CONNECTIONS'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ LOG_FORMAT: 'xml' }, 'LOG_FORMAT'],
    [{ METRICS_TOKEN: 'short' }, 'METRICS_TOKEN'],
    [{ MARKETS: 'coinbase,nasdaq' }, 'MARKETS'],
    [{ MARKETS: 'kraken,kraken' }, 'MARKETS'],
    [{ MARKETS: 'kraken,,bitstamp' }, 'MARKETS'],
    [{ MARKET_KRAKEN_URL: 'not a url' }, 'MARKET_KRAKEN_URL'],
    [{ MARKET_KRAKEN_URL: 'ftp://127.0.0.1' }, 'MARKET_KRAKEN_URL'],
    [{ ASSETS: 'BTC,ET-H' }, 'ASSETS'],
    [{ ASSETS: 'BTC,btc' }, 'ASSETS'],
    [{ PRICE_REFRESH_MS: '10' }, 'PRICE_REFRESH_MS'],
    [{ PRICE_STALE_MS: '4000', PRICE_REFRESH_MS: '5000' }, 'PRICE_STALE_MS'],
    [{ PRICE_MIN_SOURCES: '0' }, 'PRICE_MIN_SOURCES'],
    [{ PRICE_MIN_SOURCES: '3', MARKETS: 'kraken,bitstamp' }, 'PRICE_MIN_SOURCES'],
    [{ PRICE_MAX_DEVIATION: '1e-2' }, 'PRICE_MAX_DEVIATION'],
    [{ PRICE_MAX_DEVIATION: '0.9' }, 'PRICE_MAX_DEVIATION'],
    [{ MARKET_TIMEOUT_MS: '5' }, 'MARKET_TIMEOUT_MS'],
    [{ PRICE_OUTLIER_FLOOR: '0.03' }, 'PRICE_OUTLIER_FLOOR'],
    [{ PRICE_MAD_MULTIPLIER: '0' }, 'PRICE_MAD_MULTIPLIER'],
    [{ PRICE_VOLUME_WEIGHTED: 'yes' }, 'PRICE_VOLUME_WEIGHTED'],
    [{ MARKET_STREAMS: 'bitstamp' }, 'MARKET_STREAMS'],
    [{ MARKET_STREAMS: 'okx', MARKETS: 'kraken,bitstamp' }, 'MARKET_STREAMS'],
    [{ MARKET_STREAMS: 'okx,okx' }, 'MARKET_STREAMS'],
    [{ MARKET_OKX_STREAM_URL: 'http://127.0.0.1:9' }, 'MARKET_OKX_STREAM_URL'],
    [{ MARKET_STREAM_QUIET_MS: '50' }, 'MARKET_STREAM_QUIET_MS'],
    [{ MARKET_STATS_REFRESH_MS: '500' }, 'MARKET_STATS_REFRESH_MS'],
    [{ MARKET_STATS_STALE_MS: '20000', MARKET_STATS_REFRESH_MS: '30000' }, 'MARKET_STATS_STALE_MS'],
    [{ MCP_MAX_EXCHANGES_PER_CLIENT: '0' }, 'MCP_MAX_EXCHANGES_PER_CLIENT'],
    [{ MCP_MAX_EXCHANGES_PER_CLIENT: 'eight' }, 'MCP_MAX_EXCHANGES_PER_CLIENT'],
    [{ MCP_MAX_EXCHANGES: '-1' }, 'MCP_MAX_EXCHANGES'],
    [{ MCP_MAX_EXCHANGES: '1000000' }, 'MCP_MAX_EXCHANGES'],
    [{ MCP_EXCHANGE_DEADLINE_MS: '500' }, 'MCP_EXCHANGE_DEADLINE_MS'],
    [{ MCP_EXCHANGE_DEADLINE_MS: '2.5' }, 'MCP_EXCHANGE_DEADLINE_MS'],
    [{ STREAM_MAX_PER_CLIENT: '0' }, 'STREAM_MAX_PER_CLIENT'],
    [{ STREAM_UNCHARGED_MS: '10' }, 'STREAM_UNCHARGED_MS'],
    [{ STREAM_STALL_MS: '10' }, 'STREAM_STALL_MS'],
  ])('refuses %j naming %s', (env, variable) => {
    const problems = problemsOf(env);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(variable);
  });

  it('keeps the streams of an instance below HTTP_MAX_CONNECTIONS: half of it unless set', () => {
    expect(loadConfig({ HTTP_MAX_CONNECTIONS: '300' }).streams.perInstance).toBe(150);
    expect(
      loadConfig({ HTTP_MAX_CONNECTIONS: '300', STREAM_MAX_PER_INSTANCE: '299' }).streams
        .perInstance,
    ).toBe(299);
    const refused: Record<string, string>[] = [
      { HTTP_MAX_CONNECTIONS: '300', STREAM_MAX_PER_INSTANCE: '300' },
      { STREAM_MAX_PER_INSTANCE: '2000' },
      { HTTP_MAX_CONNECTIONS: '1' },
    ];
    for (const env of refused) {
      const problems = problemsOf(env);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(
        /^STREAM_MAX_PER_INSTANCE \(\d+.*below HTTP_MAX_CONNECTIONS \(\d+\)/,
      );
    }
  });

  it('turns streams off with MARKET_STREAMS=none, and streams only enabled venues by default', () => {
    expect(loadConfig({ MARKET_STREAMS: 'none' }).markets.streams).toEqual([]);
    expect(loadConfig({ MARKET_STREAMS: 'OKX, bybit' }).markets.streams).toEqual(['okx', 'bybit']);
    expect(loadConfig({ MARKETS: 'bitstamp,okx,gemini' }).markets.streams).toEqual(['okx']);
  });

  describe('chainlink', () => {
    const ETH_FEED = '0x71041dddad3595F9CEd3DcCFBe3D1F4b0a16Bb70';
    const RPC = { CHAINLINK_RPC_URL: 'http://127.0.0.1:8545' };

    it('reads the Base mainnet USD feeds when only CHAINLINK_RPC_URL is set', () => {
      expect(loadConfig({ CHAINLINK_RPC_URL: 'https://base.example/v2/key' }).chainlink).toEqual({
        rpcUrl: 'https://base.example/v2/key',
        feeds: BASE_CHAINLINK_USD_FEEDS,
        updateRules: BASE_CHAINLINK_UPDATE_RULES,
      });
      expect(Object.keys(BASE_CHAINLINK_USD_FEEDS)).toEqual(['ETH', 'BTC', 'USDC', 'USDT', 'LINK']);
      expect(Object.keys(BASE_CHAINLINK_UPDATE_RULES)).toEqual(
        Object.keys(BASE_CHAINLINK_USD_FEEDS),
      );
    });

    it.each([
      [
        { CHAINLINK_FEEDS: `ETH=${ETH_FEED}` },
        'CHAINLINK_FEEDS is set but CHAINLINK_RPC_URL is not',
      ],
      [{ CHAINLINK_RPC_URL: 'base mainnet' }, 'CHAINLINK_RPC_URL'],
      [{ ...RPC, CHAINLINK_FEEDS: 'ETH' }, 'CHAINLINK_FEEDS item "ETH"'],
      [{ ...RPC, CHAINLINK_FEEDS: 'ETH=0x1234' }, 'CHAINLINK_FEEDS item "ETH=0x1234"'],
      [{ ...RPC, CHAINLINK_FEEDS: `E-TH=${ETH_FEED}` }, 'CHAINLINK_FEEDS item "E-TH='],
      [{ ...RPC, CHAINLINK_FEEDS: `ETH=${ETH_FEED}=x` }, 'CHAINLINK_FEEDS item "ETH='],
      [{ ...RPC, CHAINLINK_FEEDS: `ETH=${ETH_FEED.replace('F9', 'f9')}` }, 'EIP-55'],
      [{ ...RPC, CHAINLINK_FEEDS: `ETH=${ETH_FEED},eth=${ETH_FEED}` }, 'lists ETH twice'],
      [{ ...RPC, CHAINLINK_FEEDS: `ETH=${ETH_FEED}:1200` }, ':heartbeatSeconds:deviationPercent'],
      [{ ...RPC, CHAINLINK_FEEDS: `ETH=${ETH_FEED}:0:0.5` }, 'CHAINLINK_FEEDS item "ETH='],
      [{ ...RPC, CHAINLINK_FEEDS: `ETH=${ETH_FEED}:1200:0` }, 'CHAINLINK_FEEDS item "ETH='],
      [{ ...RPC, CHAINLINK_FEEDS: `ETH=${ETH_FEED}:1200:1e-1` }, 'CHAINLINK_FEEDS item "ETH='],
      [{ ...RPC, CHAINLINK_FEEDS: `ETH=${ETH_FEED}:1200:0.5:9` }, 'CHAINLINK_FEEDS item "ETH='],
    ])('refuses %j', (env, message) => {
      const problems = problemsOf(env);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain(message);
    });

    it('never echoes an RPC URL, which may carry an API key', () => {
      const problems = problemsOf({ CHAINLINK_RPC_URL: 'wss://base.example/v2/secret-key' });
      expect(problems.join('\n')).toContain('CHAINLINK_RPC_URL');
      expect(problems.join('\n')).not.toContain('secret-key');
    });
  });

  describe('payments', () => {
    it('resolves the network aliases and their USDC', () => {
      expect(loadConfig({ X402_NETWORK: 'base' }).payments.networks).toMatchObject([
        {
          network: 'eip155:8453',
          chainId: 8453,
          asset: {
            address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
            name: 'USD Coin',
            version: '2',
            decimals: 6,
          },
        },
      ]);
      expect(loadConfig({ X402_NETWORK: 'base-sepolia' }).payments.networks[0].network).toBe(
        'eip155:84532',
      );
    });

    it('sells on every network of X402_NETWORKS, each with its own token, chain and facilitator', () => {
      const { networks } = loadConfig({
        X402_NETWORKS: 'base, polygon ,eip155:42161,eip155:31338',
        X402_RPC_URL: 'http://127.0.0.1:8545',
        X402_RPC_URL_137: 'http://127.0.0.1:8546/',
        X402_FACILITATOR_URL_42161: 'http://127.0.0.1:4021',
        X402_ASSET_ADDRESS_31338: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
        X402_ASSET_NAME_31338: 'Test USD',
        X402_ASSET_VERSION_31338: '1',
        X402_ASSET_DECIMALS_31338: '18',
      }).payments;
      expect(
        networks.map(({ network, rpcUrl, facilitatorUrl }) => [network, rpcUrl, facilitatorUrl]),
      ).toEqual([
        ['eip155:8453', 'http://127.0.0.1:8545', undefined],
        ['eip155:137', 'http://127.0.0.1:8546', undefined],
        ['eip155:42161', undefined, 'http://127.0.0.1:4021'],
        ['eip155:31338', undefined, undefined],
      ]);
      // known networks take @x402/evm's default stablecoin
      expect(networks[1]?.asset).toEqual({
        address: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359',
        name: 'USD Coin',
        version: '2',
        decimals: 6,
      });
      expect(networks[3]?.asset).toEqual({
        address: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
        name: 'Test USD',
        version: '1',
        decimals: 18,
      });
    });

    it('refuses an unknown network without its asset, a network listed twice, and embedded mode without each RPC', () => {
      expect(problemsOf({ X402_NETWORKS: 'base,eip155:31338' })).toEqual([
        'X402_ASSET_ADDRESS_31338, X402_ASSET_NAME_31338, X402_ASSET_VERSION_31338 required: eip155:31338 has no default USDC',
      ]);
      expect(problemsOf({ X402_NETWORKS: 'base,eip155:8453' })).toEqual([
        'X402_NETWORKS lists eip155:8453 twice',
      ]);
      expect(problemsOf({ X402_NETWORKS: 'base,nowhere' })[0]).toContain('(got "nowhere")');
      expect(
        problemsOf({
          X402_NETWORKS: 'base,polygon',
          X402_FACILITATOR: 'embedded',
          X402_SETTLER_PRIVATE_KEY: SETTLER_KEY,
          X402_RPC_URL: 'http://127.0.0.1:8545',
        })[0],
      ).toContain('and eip155:137 has none');
      expect(problemsOf({ X402_RPC_URL_137: 'not a url', X402_NETWORKS: 'polygon' })).toEqual([
        'X402_RPC_URL_137 must be an http(s) URL',
      ]);
    });

    it('accepts a lower-case X402_PAY_TO and stores it checksummed', () => {
      expect(loadConfig({ X402_PAY_TO: PAY_TO.toLowerCase() }).payments.payTo).toBe(PAY_TO);
    });

    it('needs the asset spelled out on a network without a default USDC', () => {
      expect(problemsOf({ X402_NETWORK: 'eip155:31337' })).toEqual([
        'X402_ASSET_ADDRESS, X402_ASSET_NAME, X402_ASSET_VERSION required: eip155:31337 has no default USDC',
      ]);
      const config = loadConfig({
        X402_NETWORK: 'eip155:31337',
        X402_ASSET_ADDRESS: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
        X402_ASSET_NAME: 'Test USD',
        X402_ASSET_VERSION: '1',
        X402_ASSET_DECIMALS: '18',
      });
      expect(config.payments.networks[0].asset).toEqual({
        address: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
        name: 'Test USD',
        version: '1',
        decimals: 18,
      });
    });

    it('builds each facilitator mode', () => {
      expect(
        loadConfig({ X402_FACILITATOR_URL: 'http://127.0.0.1:4020/' }).payments.facilitator,
      ).toEqual({
        mode: 'remote',
        url: 'http://127.0.0.1:4020',
        timeoutMs: 15_000,
      });
      expect(
        loadConfig({ X402_FACILITATOR: 'cdp', CDP_API_KEY_ID: 'id', CDP_API_KEY_SECRET: 'secret' })
          .payments.facilitator,
      ).toEqual({ mode: 'cdp', apiKeyId: 'id', apiKeySecret: 'secret', timeoutMs: 15_000 });
      expect(
        loadConfig({
          X402_FACILITATOR: 'embedded',
          X402_SETTLER_PRIVATE_KEY: SETTLER_KEY,
          X402_RPC_URL: 'http://127.0.0.1:8545',
        }).payments.facilitator,
      ).toEqual({
        mode: 'embedded',
        settlerPrivateKey: SETTLER_KEY,
        receiptMaxWaitMs: undefined,
        receiptTimeoutMs: 15_000,
      });
    });

    it('receipt waits follow the chain unless X402_RECEIPT_POLL_MS caps them', () => {
      const embedded = {
        X402_FACILITATOR: 'embedded',
        X402_SETTLER_PRIVATE_KEY: SETTLER_KEY,
        X402_RPC_URL: 'http://127.0.0.1:8545',
      };
      const maxWait = (env: Record<string, string>): number | undefined => {
        const { facilitator } = loadConfig({ ...embedded, ...env }).payments;
        return facilitator.mode === 'embedded' ? facilitator.receiptMaxWaitMs : -1;
      };
      expect(maxWait({})).toBeUndefined();
      expect(maxWait({ X402_RECEIPT_POLL_MS: '0' })).toBeUndefined();
      expect(maxWait({ X402_RECEIPT_POLL_MS: '20' })).toBe(20);
    });

    it("bounds settlement and verification, and reads the seller's RPC beside any facilitator", () => {
      const defaults = loadConfig({}).payments;
      expect(defaults).toMatchObject({ settleTimeoutMs: 15_000, verifyTimeoutMs: 10_000 });
      expect(defaults.networks[0].rpcUrl).toBeUndefined();
      const tuned = loadConfig({
        X402_SETTLE_TIMEOUT_MS: '3000',
        X402_VERIFY_TIMEOUT_MS: '2000',
        X402_RPC_URL: 'http://127.0.0.1:8545',
      }).payments;
      expect(tuned).toMatchObject({
        settleTimeoutMs: 3000,
        verifyTimeoutMs: 2000,
        facilitator: { mode: 'remote' },
      });
      expect(tuned.networks[0].rpcUrl).toBe('http://127.0.0.1:8545');
      expect(problemsOf({ X402_SETTLE_TIMEOUT_MS: '10' })[0]).toContain('X402_SETTLE_TIMEOUT_MS');
    });

    it('reads the offered schemes and the batch-settlement timer, threshold and directory', () => {
      const config = loadConfig({
        X402_SCHEMES: ' batch-settlement , exact,batch-settlement',
        X402_BATCH_SETTLE_INTERVAL_MS: '5000',
        X402_BATCH_CLAIM_THRESHOLD: '0',
        X402_BATCH_DATA_DIR: '/var/lib/prices/channels',
      });
      expect(config.payments.schemes).toEqual(['batch-settlement', 'exact']);
      expect(config.batchSettlement).toMatchObject({
        settleIntervalMs: 5000,
        claimThreshold: 0n,
        dataDir: '/var/lib/prices/channels',
      });
      expect(loadConfig({ X402_SCHEMES: 'exact' }).payments.schemes).toEqual(['exact']);
      expect(
        loadConfig({
          X402_FACILITATOR: 'embedded',
          X402_SETTLER_PRIVATE_KEY: SETTLER_KEY,
          X402_RPC_URL: 'http://127.0.0.1:8545',
        }).payments.schemes,
      ).toEqual(['exact', 'batch-settlement']);
      // a remote facilitator may not do batch-settlement: asked for explicitly there
      expect(
        loadConfig({
          X402_FACILITATOR: 'remote',
          X402_FACILITATOR_URL: 'https://facilitator.example',
        }).payments.schemes,
      ).toEqual(['exact']);
      // a list of names; which names exist is the registered schemes' question (SchemeRegistry)
      expect(problemsOf({ X402_SCHEMES: 'exact;upto' })[0]).toContain('X402_SCHEMES');
      expect(loadConfig({ X402_SCHEMES: ' exact , upto ' }).payments.schemes).toEqual([
        'exact',
        'upto',
      ]);
      // claims must land before a payer's shortest timed withdrawal (15 min) can finalize
      expect(problemsOf({ X402_BATCH_SETTLE_INTERVAL_MS: '900000' })[0]).toContain(
        'X402_BATCH_SETTLE_INTERVAL_MS',
      );
    });

    it('reads the deposit the batch offer asks for in USD, within what the official client deposits', () => {
      expect(loadConfig({}).batchSettlement.minDeposit).toBeUndefined();
      expect(loadConfig({ X402_BATCH_MIN_DEPOSIT: '0.5' }).batchSettlement.minDeposit).toBe('$0.5');
      expect(loadConfig({ X402_BATCH_MIN_DEPOSIT: '5' }).batchSettlement.minDeposit).toBe('$5');
      expect(problemsOf({ X402_BATCH_MIN_DEPOSIT: '0' })).toEqual([
        'X402_BATCH_MIN_DEPOSIT must be more than 0',
      ]);
      expect(problemsOf({ X402_BATCH_MIN_DEPOSIT: '5.000001' })[0]).toContain(
        'X402_BATCH_MIN_DEPOSIT must be at most 5 (USD)',
      );
      for (const malformed of ['$1', '1e3', '0.0000001', '-1', '01']) {
        expect(problemsOf({ X402_BATCH_MIN_DEPOSIT: malformed })).toEqual([
          `X402_BATCH_MIN_DEPOSIT must be a USD amount such as 1 or 0.5 (at most 6 decimals) (got "${malformed}")`,
        ]);
      }
    });

    it.each([
      [{ X402_PAY_TO: '' }, 'X402_PAY_TO is required'],
      [{ X402_PAY_TO: '0x1234' }, 'X402_PAY_TO must be a 0x-prefixed 20-byte address'],
      [
        { X402_PAY_TO: '0x70997970c51812dc3A010C7d01b50e0d17dc79C8' },
        'X402_PAY_TO has an invalid EIP-55 checksum',
      ],
      [{ X402_NETWORK: 'nowhere' }, 'X402_NETWORK must list base, base-sepolia, a network'],
      [{ X402_FACILITATOR: 'paypal' }, 'X402_FACILITATOR must be one of'],
      [{ X402_FACILITATOR: 'cdp' }, 'CDP_API_KEY_ID and CDP_API_KEY_SECRET are required'],
      [{ X402_FACILITATOR: 'embedded' }, 'X402_SETTLER_PRIVATE_KEY and X402_RPC_URL are required'],
      [{ X402_MAX_TIMEOUT_SECONDS: '5' }, 'X402_MAX_TIMEOUT_SECONDS'],
      [{ PUBLIC_URL: 'api.example.com' }, 'PUBLIC_URL'],
    ])('refuses %j', (env, message) => {
      const problems = problemsOf(env);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain(message);
    });

    it('never echoes a secret', () => {
      const secret = '0xnot-a-key-but-secret';
      const problems = problemsOf({
        X402_FACILITATOR: 'embedded',
        X402_SETTLER_PRIVATE_KEY: secret,
        X402_RPC_URL: 'http://127.0.0.1:8545',
      });
      expect(problems.join('\n')).toContain('X402_SETTLER_PRIVATE_KEY');
      expect(problems.join('\n')).not.toContain(secret);
    });

    it("puts the exact-svm section's Solana networks in the payments, and nothing without them", () => {
      const config = loadConfig({
        X402_NETWORKS: 'base,solana-devnet',
        X402_PAY_TO_SOLANA: '4Q9A6mXDSPTcKTLSk87uDpkeFmA7Cn132PFE8fRBPhTR',
        X402_SOLANA_RPC_URL: 'http://127.0.0.1:8899/',
      });
      expect(config.payments.solana).toBe(config.exactSvm);
      expect(config.payments.solana).toMatchObject({
        payTo: '4Q9A6mXDSPTcKTLSk87uDpkeFmA7Cn132PFE8fRBPhTR',
        networks: [{ network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1' }],
        rpcUrl: 'http://127.0.0.1:8899',
      });
      expect(config.payments.networks.map(({ network }) => network)).toEqual(['eip155:8453']);
      expect('solana' in loadConfig({ X402_NETWORK: 'base' }).payments).toBe(false);
      expect(problemsOf({ X402_NETWORKS: 'base,solana' })).toEqual([
        'X402_PAY_TO_SOLANA is required when X402_NETWORKS lists a Solana network: the wallet that receives payments',
      ]);
    });

    it('never echoes a bad METRICS_TOKEN', () => {
      const problems = problemsOf({ METRICS_TOKEN: 'tok en' });
      expect(problems.join('\n')).toContain('METRICS_TOKEN');
      expect(problems.join('\n')).not.toContain('tok en');
    });

    it.each([
      ['X402_FACILITATOR_URL', 'https://user:hunter2@facilitator.example:99999/'],
      ['MARKET_KRAKEN_URL', 'ftp://user:hunter2@mirror.example/'],
    ])('never echoes %s, which may carry credentials', (variable, value) => {
      const problems = problemsOf({ [variable]: value });
      expect(problems.join('\n')).toContain(variable);
      expect(problems.join('\n')).not.toContain('hunter2');
    });
  });

  it('reports every bad variable at once, in one message', () => {
    const error = (() => {
      try {
        loadConfig({ PORT: '-1', LOG_LEVEL: 'x' });
      } catch (caught) {
        return caught as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(error.problems).toHaveLength(2);
    expect(error.message).toMatch(/PORT[\s\S]*LOG_LEVEL/);
  });
});

describe('the settings sections', () => {
  const root = projectRoot();
  const reference = readFileSync(path.join(root, 'docs', 'configuration.md'), 'utf8');
  const example = readFileSync(path.join(root, '.env.example'), 'utf8');
  const variables = Object.values(SETTINGS_SECTIONS).flatMap((section) => variableNames(section));

  it('declare each variable once, across all features', () => {
    expect(variables.length).toBeGreaterThan(30);
    expect(new Set(variables).size).toBe(variables.length);
  });

  it.each(variables)('%s is documented in docs/configuration.md and .env.example', (variable) => {
    expect(reference).toContain(variable);
    expect(example).toMatch(new RegExp(`^#? ?${variable}=`, 'm'));
  });
});
