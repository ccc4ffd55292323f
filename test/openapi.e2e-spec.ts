import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createOpenApiJson } from './support/openapi-json.js';
import { COMMITTED_OPENAPI_PATH } from './support/openapi-contract.js';
import { ERROR_STATUS, type ErrorCode } from '../src/common/api-error.js';
import { FakeMarkets } from './support/fake-markets.js';
import { startApp, type RunningApp } from './support/test-app.js';

type Operation = {
  operationId: string;
  summary: string;
  description?: string;
  parameters?: { in: string; name: string; examples?: Record<string, { value: string }> }[];
  responses: Record<string, Response>;
  'x-x402-price'?: { amount: string; currency: string };
};
type Response = {
  description: string;
  content?: Record<string, { example?: unknown; examples?: Record<string, { value: unknown }> }>;
};
type Challenge = {
  x402Version: number;
  accepts: {
    maxAmountRequired: string;
    resource: string;
    network: string;
    outputSchema: unknown;
  }[];
};

const PAID = [
  ['getTicker', '/v1/ticker/{symbol}', '$0.002', '2000'],
  ['getTickers', '/v1/tickers/{symbols}', '$0.008', '8000'],
  ['getAllTickers', '/v1/all-tickers', '$0.010', '10000'],
  ['getOhlc', '/v1/ohlc/{symbol}', '$0.005', '5000'],
] as const;

/** The operation's path with each path parameter's first example. */
function examplePath(path: string, operation: Operation): string {
  return path.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const parameter = operation.parameters?.find((candidate) => candidate.name === name);
    return Object.values(parameter?.examples ?? {})[0]?.value ?? '';
  });
}

/** A schema with every `$ref` to a component replaced by that component, as a 402 carries it. */
function inlined(schema: unknown, schemas: Record<string, unknown>): unknown {
  if (Array.isArray(schema)) return schema.map((item) => inlined(item, schemas));
  if (typeof schema !== 'object' || schema === null) return schema;
  const { $ref } = schema as { $ref?: string };
  if ($ref !== undefined) return inlined(schemas[$ref.split('/').pop()!], schemas);
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, inlined(value, schemas)]),
  );
}

function challengeExample(operation: Operation): Challenge {
  return operation.responses['402']?.content?.['application/json']?.example as Challenge;
}

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
    ['getOhlc', '0.005'],
    ['getPriceAt', '0.003'],
  ])('%s declares its price of USD %s', (id, amount) => {
    expect(operation(id)['x-x402-price']).toEqual({ amount, currency: 'USD' });
  });

  it('leaves listAssets free', () => {
    expect(operation('listAssets')['x-x402-price']).toBeUndefined();
  });

  it('describes every operation', () => {
    const undescribed = operations.filter((candidate) => !candidate.description?.trim());
    expect(undescribed.map((candidate) => candidate.operationId)).toEqual([]);
  });

  it.each([...PAID, ['getPriceAt', '', '$0.003', '3000']] as const)(
    '%s shows its price in its summary',
    (id, _path, price) => {
      expect(operation(id).summary).toMatch(new RegExp(`\\(\\${price} per request\\)$`));
    },
  );

  it.each(PAID)(
    '%s has its own 402 example: its amount, its path, the default network, its output schema',
    (id, path, _price, atomic) => {
      const found = operation(id);
      const [accept, ...others] = challengeExample(found).accepts;
      expect(others).toEqual([]);
      expect(accept?.maxAmountRequired).toBe(atomic);
      expect(accept?.network).toBe('base-sepolia');
      expect(new URL(accept!.resource).pathname).toBe(examplePath(path, found));
      const ok = found.responses['200']?.content?.['application/json'] as { schema: unknown };
      const output = (accept?.outputSchema as { output: Record<string, unknown> }).output;
      const ref = (ok.schema as { $ref: string }).$ref.split('/').pop()!;
      const schemas = (JSON.parse(committed) as { components: { schemas: Record<string, object> } })
        .components.schemas;
      expect(output).toEqual(inlined(schemas[ref], schemas));
    },
  );

  it('gives every error response examples of its own status, with codes answered with that status', () => {
    let checked = 0;
    for (const candidate of operations) {
      for (const [status, response] of Object.entries(candidate.responses)) {
        const examples = response.content?.['application/problem+json']?.examples;
        if (response.content?.['application/problem+json'] === undefined) continue;
        expect([candidate.operationId, status, examples === undefined]).toEqual([
          candidate.operationId,
          status,
          false,
        ]);
        for (const [name, { value }] of Object.entries(examples ?? {})) {
          const body = value as { status: number; code: ErrorCode };
          const expected = status === 'default' ? 500 : Number(status);
          expect([candidate.operationId, status, name, body.status, body.code]).toEqual([
            candidate.operationId,
            status,
            body.code,
            expected,
            name,
          ]);
          expect(ERROR_STATUS[body.code]).toBe(expected);
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('lists the 429 with Retry-After on every operation but the health probes, which are never limited', () => {
    const limited = operations
      .filter((candidate) => candidate.responses['429'] !== undefined)
      .map((candidate) => candidate.operationId);
    const all = operations.map((candidate) => candidate.operationId);
    expect(limited.sort()).toEqual(
      all.filter((id) => id !== 'getLiveness' && id !== 'getReadiness').sort(),
    );
    for (const id of limited) {
      const response = operation(id).responses['429'] as Response & {
        headers?: Record<string, unknown>;
      };
      expect(Object.keys(response.headers ?? {})).toEqual(['Retry-After']);
      const examples = response.content?.['application/problem+json']?.examples ?? {};
      // a route with a 429 of its own (the price stream's per-payer limit) keeps it beside the limit's
      const own = id === 'streamPrices' ? ['stream_limit'] : [];
      expect(Object.keys(examples)).toEqual([...own, 'rate_limited']);
    }
  });

  it("shows in each operation's 503 example a detail that operation answers with", () => {
    const detailOf = (id: string): string => {
      const examples = operation(id).responses['503']?.content?.['application/problem+json']
        ?.examples as Record<string, { value: { detail: string } }>;
      return examples['price_unavailable']!.value.detail;
    };
    expect(detailOf('getTicker')).toMatch(/^No trustworthy price for [A-Z]+ right now\.$/);
    expect(detailOf('getAllTickers')).toMatch(
      /^Only \d+ of \d+ assets have a trustworthy price\.$/,
    );
  });

  it("keeps any one route's price out of the 402 schema every paid route shares", () => {
    const schemas = (
      JSON.parse(committed) as {
        components: {
          schemas: Record<string, { properties: Record<string, { example?: unknown }> }>;
        };
      }
    ).components.schemas;
    const requirements = schemas['PaymentRequirementsV1Dto']!.properties;
    for (const field of ['maxAmountRequired', 'resource', 'description']) {
      expect([field, requirements[field]?.example]).toEqual([field, undefined]);
    }
  });
});

describe('served documentation', () => {
  let service: RunningApp;
  let markets: FakeMarkets;

  beforeAll(async () => {
    markets = await FakeMarkets.start({ venues: ['kraken', 'bitstamp'] });
    service = await startApp({
      // the committed document's settings: its examples name this payee and port
      X402_PAY_TO: '0x0000000000000000000000000000000000000001',
      PORT: '3000',
      ...markets.env(),
    });
    await service.refresh();
  });

  afterAll(async () => {
    await service.close();
    await markets.close();
  });

  it('serves the committed document at /openapi.json', async () => {
    const response = await service.get('/openapi.json');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(JSON.parse(readFileSync(COMMITTED_OPENAPI_PATH, 'utf8')));
  });

  it.each(PAID)(
    'documents for %s the 402 a request to its example path really gets',
    async (id, path) => {
      const document = (await (await service.get('/openapi.json')).json()) as {
        paths: Record<string, Record<string, Operation>>;
      };
      const found = document.paths[path]!.get!;
      expect(found.operationId).toBe(id);
      const example = challengeExample(found);
      const response = await service.get(examplePath(path, found));
      expect(response.status).toBe(402);
      const real = (await response.json()) as Challenge;
      const resource = (challenge: Challenge): Challenge => ({
        ...challenge,
        accepts: challenge.accepts.map((accept) => ({
          ...accept,
          resource: new URL(accept.resource).pathname,
        })),
      });
      expect(resource(example)).toEqual(resource(real));
    },
  );

  it('serves Swagger UI at /docs', async () => {
    const page = await service.get('/docs');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger-ui');
    const init = await service.get('/docs/swagger-ui-init.js');
    expect(init.status).toBe(200);
    expect(await init.text()).toContain('"operationId": "getTicker"');
  });
});
