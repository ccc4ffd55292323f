import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createOpenApiJson } from './support/openapi-json.js';
import { COMMITTED_OPENAPI_PATH } from './support/openapi-contract.js';
import { startApp, type RunningApp } from './support/test-app.js';

type Operation = {
  operationId: string;
  responses: Record<string, unknown>;
  'x-x402-price'?: unknown;
};

describe('OpenAPI document', () => {
  const committed = readFileSync(COMMITTED_OPENAPI_PATH, 'utf8');
  const document = JSON.parse(committed) as {
    openapi: string;
    info: { version: string };
    paths: Record<string, Record<string, Operation>>;
  };
  const operations = Object.values(document.paths).flatMap((item) => Object.values(item));
  const operation = (id: string): Operation => {
    const found = operations.find((candidate) => candidate.operationId === id);
    if (found === undefined) throw new Error(`no operation ${id}`);
    return found;
  };

  it('matches the code: run `npm run openapi` after changing an endpoint', async () => {
    expect(await createOpenApiJson()).toBe(committed);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(committed);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe('1.0.0');
  });

  it('names the four product operations on their routes', () => {
    expect(document.paths['/v1/assets']?.get?.operationId).toBe('listAssets');
    expect(document.paths['/v1/ticker/{symbol}']?.get?.operationId).toBe('getTicker');
    expect(document.paths['/v1/tickers/{symbols}']?.get?.operationId).toBe('getTickers');
    expect(document.paths['/v1/all-tickers']?.get?.operationId).toBe('getAllTickers');
  });

  it.each([
    ['getTicker', '0.002'],
    ['getTickers', '0.008'],
    ['getAllTickers', '0.010'],
  ])('%s declares its price of USD %s', (id, amount) => {
    expect(operation(id)['x-x402-price']).toEqual({ amount, currency: 'USD' });
  });

  it('leaves listAssets free', () => {
    expect(operation('listAssets')['x-x402-price']).toBeUndefined();
  });
});

describe('served documentation', () => {
  let service: RunningApp;

  beforeAll(async () => {
    service = await startApp({
      MARKETS: 'kraken,bitstamp',
      MARKET_KRAKEN_URL: 'http://127.0.0.1:9',
      MARKET_BITSTAMP_URL: 'http://127.0.0.1:9',
    });
  });

  afterAll(async () => {
    await service.close();
  });

  it('serves the committed document at /openapi.json', async () => {
    const response = await service.get('/openapi.json');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(JSON.parse(readFileSync(COMMITTED_OPENAPI_PATH, 'utf8')));
  });

  it('serves Swagger UI at /docs', async () => {
    const page = await service.get('/docs');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger-ui');
    const init = await service.get('/docs/swagger-ui-init.js');
    expect(init.status).toBe(200);
    expect(await init.text()).toContain('"operationId": "getTicker"');
  });
});
