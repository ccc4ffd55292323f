import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../common/api-error.js';
import type { AnswerResolver } from '../paid-answers/index.js';
import { TickerQuotesService, parseSymbols } from '../tickers/index.js';
import type { StreamRequest } from './price-stream.js';

export const MIN_STREAM_SYMBOLS = 1;
export const MAX_STREAM_SYMBOLS = 25;

/**
 * `GET /v1/stream/{symbols}` before any 402: the symbols checked as the tickers check theirs
 * (400 malformed, 404 unknown, 503 without a fresh price now) and the options in range (400).
 */
@Injectable()
export class StreamRequestResolver implements AnswerResolver<StreamRequest> {
  constructor(private readonly quotes: TickerQuotesService) {}

  async resolve(request: FastifyRequest): Promise<StreamRequest> {
    const raw = (request.params as { symbols?: string }).symbols ?? '';
    const symbols = parseSymbols(raw, MIN_STREAM_SYMBOLS, MAX_STREAM_SYMBOLS);
    const query = (request.query ?? {}) as Record<string, unknown>;
    const minMoveBps = numberOption(query, 'minMoveBps', 0, 0, 10_000);
    const maxHz = numberOption(query, 'maxHz', 1, 0.1, 10);
    await this.quotes.check({ kind: 'many', symbols });
    return { symbols, minMoveBps, maxHz };
  }
}

function numberOption(
  query: Record<string, unknown>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = query[name];
  if (raw === undefined) return fallback;
  const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new ApiError(ErrorCode.BadRequest, `${name} must be a number from ${min} to ${max}.`);
  }
  return value;
}
