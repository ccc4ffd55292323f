import { Injectable, NotFoundException } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../../src/common/api-error.js';
import type { AnswerResolver } from '../../src/paid-answers/index.js';
import { ToyWord, ToyWordBook } from './toy-word-book.js';

/** A word is 1 to 20 letters, either case. */
const WORD = /^[a-z]{1,20}$/i;

/** Checks the word (400), finds it (404) while the book is open (503), before any 402. */
@Injectable()
export class ToyWordResolver implements AnswerResolver<ToyWord> {
  constructor(private readonly book: ToyWordBook) {}

  async resolve(request: FastifyRequest): Promise<ToyWord> {
    const { word = '' } = request.params as { word?: string };
    if (!WORD.test(word)) {
      throw new ApiError(ErrorCode.BadRequest, 'A word is 1 to 20 letters.');
    }
    const canonical = word.toLowerCase();
    const price = await this.book.priceOf(canonical).catch(() => {
      throw new ApiError(ErrorCode.PriceUnavailable, 'The word book is closed right now.', {
        'retry-after': '5',
      });
    });
    if (price === undefined) throw new NotFoundException(`${canonical} is not in the book.`);
    return new ToyWord(canonical, price);
  }
}
