import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { AnswerResolver } from '../paid-answers/index.js';
import { TickerQuotesService, type TickerQuotes } from './ticker-quotes.service.js';
import { selectionOf, type SelectionKind } from './ticker-selection.js';

/**
 * The ticker routes' resolvers, run before any payment guard: parse the symbols (400), check
 * the catalogue (404) and the snapshot (503), so a client never pays for a request that cannot
 * be answered. The quotes they resolve are the ones the handler serves and the attestation signs.
 */
@Injectable()
abstract class TickerSelectionResolver implements AnswerResolver<TickerQuotes> {
  protected abstract readonly kind: SelectionKind;

  constructor(private readonly quotes: TickerQuotesService) {}

  async resolve(request: FastifyRequest): Promise<TickerQuotes> {
    const params = request.params as Record<string, string>;
    return await this.quotes.quote(selectionOf(this.kind, params));
  }
}

/** `/v1/ticker/:symbol`: one symbol. */
@Injectable()
export class TickerResolver extends TickerSelectionResolver {
  protected readonly kind = 'one';
}

/** `/v1/tickers/:symbols`: a comma-separated list. */
@Injectable()
export class TickerListResolver extends TickerSelectionResolver {
  protected readonly kind = 'many';
}

/** `/v1/all-tickers`: every catalogue asset with a price. */
@Injectable()
export class AllTickersResolver extends TickerSelectionResolver {
  protected readonly kind = 'all';
}
