import {
  Injectable,
  SetMetadata,
  createParamDecorator,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { parseSymbol, parseSymbolList } from './symbols.js';
import {
  TickerQuotesService,
  type TickerQuotes,
  type TickerSelection,
} from './ticker-quotes.service.js';

export type SelectionKind = TickerSelection['kind'];
type RequestWithQuotes = FastifyRequest & { tickerQuotes?: TickerQuotes };

const SELECTION_KIND = Symbol('TickerSelectionKind');

/** Marks a ticker route with the kind of selection its path parameters make. */
export const Selects = (kind: SelectionKind): MethodDecorator => SetMetadata(SELECTION_KIND, kind);

/**
 * Runs before any payment guard: parses the symbols (400), checks the catalogue (404) and
 * the snapshot (503), so a client never pays for a request that cannot be answered. The
 * quotes it resolves are the ones the handler serves.
 */
@Injectable()
export class TickerRequestGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly quotes: TickerQuotesService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const kind = this.reflector.get<SelectionKind | undefined>(
      SELECTION_KIND,
      context.getHandler(),
    );
    if (kind === undefined) return true;
    const request = context.switchToHttp().getRequest<RequestWithQuotes>();
    const params = request.params as Record<string, string>;
    request.tickerQuotes = await this.quotes.quote(selectionOf(kind, params));
    return true;
  }
}

/** The selection kind `@Selects` gave a handler, if any. */
export function selectionKindOf(handler: (...args: never[]) => unknown): SelectionKind | undefined {
  return Reflect.getMetadata(SELECTION_KIND, handler) as SelectionKind | undefined;
}

/** The symbols a request of `kind` asks for: 400 when malformed. */
export function selectionOf(kind: SelectionKind, params: Record<string, string>): TickerSelection {
  switch (kind) {
    case 'one':
      return { kind, symbol: parseSymbol(params.symbol ?? '') };
    case 'many':
      return { kind, symbols: parseSymbolList(params.symbols ?? '') };
    case 'all':
      return { kind };
  }
}

/** The quotes TickerRequestGuard resolved for `request`, if it ran. */
export function resolvedQuotesOf(request: FastifyRequest): TickerQuotes | undefined {
  return (request as RequestWithQuotes).tickerQuotes;
}

/** The quotes TickerRequestGuard resolved for this request. */
export const ResolvedQuotes = createParamDecorator((_data: unknown, context: ExecutionContext) => {
  const quotes = context.switchToHttp().getRequest<RequestWithQuotes>().tickerQuotes;
  if (quotes === undefined) throw new Error('TickerRequestGuard did not run for this route');
  return quotes;
});
