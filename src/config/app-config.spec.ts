import { ConfigError, loadConfig } from './app-config.js';

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
      http: { port: 3000, host: '0.0.0.0' },
      logLevel: 'log',
      markets: { enabled: ['coinbase', 'kraken', 'bitstamp'], baseUrls: {}, timeoutMs: 4000 },
      assets: undefined,
      pricing: { refreshMs: 5000, staleMs: 60_000, minSources: 2, maxDeviation: 0.02 },
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'debug',
      MARKETS: 'Kraken, bitstamp',
      MARKET_KRAKEN_URL: 'http://127.0.0.1:9001/',
      MARKET_TIMEOUT_MS: '1500',
      ASSETS: 'btc,eth',
      PRICE_REFRESH_MS: '1000',
      PRICE_STALE_MS: '30000',
      PRICE_MIN_SOURCES: '1',
      PRICE_MAX_DEVIATION: '0.05',
    });
    expect(config).toEqual({
      http: { port: 8080, host: '127.0.0.1' },
      logLevel: 'debug',
      markets: {
        enabled: ['kraken', 'bitstamp'],
        baseUrls: { kraken: 'http://127.0.0.1:9001' },
        timeoutMs: 1500,
      },
      assets: ['BTC', 'ETH'],
      pricing: { refreshMs: 1000, staleMs: 30_000, minSources: 1, maxDeviation: 0.05 },
    });
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ PORT: '', MARKETS: ' ' }).http.port).toBe(3000);
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '80.5' }, 'PORT'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ MARKETS: 'coinbase,nasdaq' }, 'MARKETS'],
    [{ MARKETS: 'kraken,kraken' }, 'MARKETS'],
    [{ MARKETS: 'kraken,,bitstamp' }, 'MARKETS'],
    [{ MARKET_KRAKEN_URL: 'not a url' }, 'MARKET_KRAKEN_URL'],
    [{ MARKET_KRAKEN_URL: 'ftp://127.0.0.1' }, 'MARKET_KRAKEN_URL'],
    [{ ASSETS: 'BTC,ET-H' }, 'ASSETS'],
    [{ ASSETS: 'BTC,btc' }, 'ASSETS'],
    [{ PRICE_REFRESH_MS: '10' }, 'PRICE_REFRESH_MS'],
    [{ PRICE_STALE_MS: '4000' }, 'PRICE_STALE_MS'],
    [{ PRICE_MIN_SOURCES: '0' }, 'PRICE_MIN_SOURCES'],
    [{ PRICE_MIN_SOURCES: '3', MARKETS: 'kraken,bitstamp' }, 'PRICE_MIN_SOURCES'],
    [{ PRICE_MAX_DEVIATION: '1e-2' }, 'PRICE_MAX_DEVIATION'],
    [{ PRICE_MAX_DEVIATION: '0.9' }, 'PRICE_MAX_DEVIATION'],
    [{ MARKET_TIMEOUT_MS: '5' }, 'MARKET_TIMEOUT_MS'],
  ])('refuses %j naming %s', (env, variable) => {
    const problems = problemsOf(env);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(variable);
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
