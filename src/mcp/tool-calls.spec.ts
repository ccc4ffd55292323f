import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { RouteTool } from './route-tools.js';
import { snakeCase } from './route-tools.js';
import { urlOf } from './tool-calls.js';

const TOOL: RouteTool = {
  name: 'get_things',
  description: 'Things',
  inputSchema: {},
  price: '$0.001',
  path: '/v1/things/:symbol/:symbols',
  arguments: [
    { name: 'symbol', in: 'path', required: true },
    { name: 'symbols', in: 'path', required: true },
    { name: 'limit', in: 'query', required: false },
  ],
};

describe('urlOf: a tool call’s arguments as its route’s URL', () => {
  it('fills each path parameter by name, URL-encoded; a list comma-separated; the rest as query', () => {
    expect(urlOf(TOOL, { symbol: 'a/b', symbols: ['BTC', 'ETH'], limit: 3 })).toBe(
      '/v1/things/a%2Fb/BTC%2CETH?limit=3',
    );
    expect(urlOf(TOOL, { symbol: 'x', symbols: 'y' })).toBe('/v1/things/x/y');
  });

  it('refuses an unknown, missing, empty or structured argument as invalid params', () => {
    for (const args of [
      { symbol: 'x', symbols: 'y', colour: 'red' },
      { symbol: 'x' },
      { symbol: '', symbols: 'y' },
      { symbol: { nested: true }, symbols: 'y' },
      { symbol: [['x']], symbols: 'y' },
    ]) {
      expect(() => urlOf(TOOL, args)).toThrow(McpError);
    }
  });
});

describe('snakeCase', () => {
  it('names a tool from its operationId', () => {
    expect(snakeCase('getTicker')).toBe('get_ticker');
    expect(snakeCase('getAllTickers')).toBe('get_all_tickers');
    expect(snakeCase('listAssets')).toBe('list_assets');
  });
});
