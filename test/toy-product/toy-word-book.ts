import { Injectable } from '@nestjs/common';
import type { AttestableAnswer, AttestedClaims } from '../../src/attestation/index.js';

/** What a word is sold at, and since when. */
interface WordPrice {
  readonly usd: number;
  readonly pricedAt: number;
}

const PRICED_AT = Date.parse('2026-11-20T12:00:00.000Z');

/**
 * The toy product's data: a few words and their prices, in memory. It can be closed, as a real
 * product's store can be unreachable, to show that a resolver's 503 costs the buyer nothing.
 */
@Injectable()
export class ToyWordBook {
  private readonly words = new Map<string, WordPrice>([
    ['apple', { usd: 1.25, pricedAt: PRICED_AT }],
    ['pear', { usd: 0.75, pricedAt: PRICED_AT + 1_000 }],
  ]);
  private open = true;

  setOpen(open: boolean): void {
    this.open = open;
  }

  /** The word's price; `undefined` for a word the book does not have; throws while closed. */
  priceOf(word: string): Promise<WordPrice | undefined> {
    if (!this.open) return Promise.reject(new Error('the word book is closed'));
    return Promise.resolve(this.words.get(word));
  }
}

/** One word's answer, and what its attestation signs: the word's price at its pricing time. */
export class ToyWord implements AttestableAnswer {
  constructor(
    readonly word: string,
    private readonly price: WordPrice,
  ) {}

  get body(): { timestamp: string; currency: 'USD'; price: Record<string, number> } {
    return {
      timestamp: new Date(this.price.pricedAt).toISOString(),
      currency: 'USD',
      price: { [this.word]: this.price.usd },
    };
  }

  attestedClaims(): AttestedClaims {
    return {
      currency: 'USD',
      timestamp: this.price.pricedAt,
      values: [{ symbol: this.word, value: this.price.usd }],
    };
  }
}
