import { SYMBOL_MAX_LENGTH, SYMBOL_OPENAPI_PATTERN } from '../assets/symbol-format.js';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { MAX_LIST_SYMBOLS, MIN_LIST_SYMBOLS } from '../tickers/symbols.js';
import type { SelectionKind } from '../tickers/ticker-request.guard.js';

/**
 * The MCP tools: the same answers as the HTTP routes, the paid ones at their HTTP route's
 * `@Paid` price (read from the route, never written here). A tool's arguments become the
 * route's path parameters and go through the route's own checks, with the same error codes.
 */

type Json = Record<string, unknown>;

/** A free tool: answered like its free HTTP route. */
export interface FreeTool {
  readonly kind: 'assets' | 'sources';
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Json;
}

/** A paid tool: sold like its `@Paid` HTTP route (`route`), at that route's price. */
export interface PaidTool {
  readonly kind: 'ticker';
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Json;
  readonly selection: SelectionKind;
  /** The HTTP route's pattern, as `@Paid` routes are found (`/v1/ticker/:symbol`). */
  readonly route: string;
}

export type McpTool = FreeTool | PaidTool;

const NO_ARGUMENTS: Json = { type: 'object', properties: {}, additionalProperties: false };
const SYMBOL: Json = {
  type: 'string',
  minLength: 1,
  maxLength: SYMBOL_MAX_LENGTH,
  pattern: SYMBOL_OPENAPI_PATTERN,
  description: 'Asset symbol, case-insensitive (see list_assets).',
};

export const MCP_TOOLS: readonly McpTool[] = [
  {
    kind: 'assets',
    name: 'list_assets',
    description: 'Free. Every symbol the ticker tools accept, each quoted in USD.',
    inputSchema: NO_ARGUMENTS,
  },
  {
    kind: 'ticker',
    name: 'get_ticker',
    selection: 'one',
    route: '/v1/ticker/:symbol',
    description: 'Current USD price of one asset: the median of the venues that agree.',
    inputSchema: {
      type: 'object',
      properties: { symbol: SYMBOL },
      required: ['symbol'],
      additionalProperties: false,
    },
  },
  {
    kind: 'ticker',
    name: 'get_tickers',
    selection: 'many',
    route: '/v1/tickers/:symbols',
    description: `Current USD prices of ${MIN_LIST_SYMBOLS} to ${MAX_LIST_SYMBOLS} distinct assets, from one snapshot.`,
    inputSchema: {
      type: 'object',
      properties: {
        symbols: {
          type: 'array',
          items: SYMBOL,
          minItems: MIN_LIST_SYMBOLS,
          maxItems: MAX_LIST_SYMBOLS,
          uniqueItems: true,
        },
      },
      required: ['symbols'],
      additionalProperties: false,
    },
  },
  {
    kind: 'ticker',
    name: 'get_all_tickers',
    selection: 'all',
    route: '/v1/all-tickers',
    description: 'Current USD price of every asset that has a fresh, agreed price.',
    inputSchema: NO_ARGUMENTS,
  },
  {
    kind: 'sources',
    name: 'get_sources',
    description:
      'Free. Each price venue and why it is or is not used; the payment networks and whether each is offered.',
    inputSchema: NO_ARGUMENTS,
  },
];

/**
 * A paid tool's arguments as its HTTP route's path parameters, and the path a request to the
 * route with them has; the route's own parsing then checks them (400 with its codes).
 */
export function routeCall(
  tool: PaidTool,
  args: Json,
): { params: Record<string, string>; path: string } {
  switch (tool.selection) {
    case 'one': {
      const symbol = typeof args['symbol'] === 'string' ? args['symbol'] : '';
      return { params: { symbol }, path: `/v1/ticker/${encodeURIComponent(symbol)}` };
    }
    case 'many': {
      const list = args['symbols'];
      if (!Array.isArray(list) || !list.every((item): item is string => typeof item === 'string')) {
        throw new ApiError(
          ErrorCode.InvalidSymbolList,
          `symbols must be an array of ${MIN_LIST_SYMBOLS} to ${MAX_LIST_SYMBOLS} symbols.`,
        );
      }
      const symbols = list.join(',');
      return { params: { symbols }, path: `/v1/tickers/${encodeURIComponent(symbols)}` };
    }
    case 'all':
      return { params: {}, path: '/v1/all-tickers' };
  }
}

/** The resource a tool's payment is for (the x402 MCP transport names tools so). */
export function toolResourceUrl(tool: McpTool): string {
  return `mcp://tool/${tool.name}`;
}
