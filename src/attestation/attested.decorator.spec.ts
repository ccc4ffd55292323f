import 'reflect-metadata';
import { TickersController } from '../tickers/tickers.controller.js';
import { ATTESTED, Attested } from './attested.decorator.js';

/** @nestjs/swagger's response metadata key (its constants module is not exported). */
const API_RESPONSE = 'swagger/apiResponse';

class Example {
  @Attested()
  answer(): void {}
}

describe('@Attested', () => {
  const handler = Object.getOwnPropertyDescriptor(Example.prototype, 'answer')?.value as object;

  it('marks the handler for PriceAttestationInterceptor', () => {
    expect(Reflect.getMetadata(ATTESTED, handler)).toBe(true);
  });

  it('documents the header on the 200', () => {
    const responses = Reflect.getMetadata(API_RESPONSE, handler) as Record<
      string,
      { headers?: Record<string, unknown> }
    >;
    expect(Object.keys(responses['200']?.headers ?? {})).toEqual(['Price-Attestation']);
  });

  it.each(['getTicker', 'getTickers', 'getAllTickers'])(
    'is on %s, whose 200 keeps its description from @Paid',
    (name) => {
      const method = (TickersController.prototype as unknown as Record<string, object>)[name];
      expect(Reflect.getMetadata(ATTESTED, method as object)).toBe(true);
      const responses = Reflect.getMetadata(API_RESPONSE, method as object) as Record<
        string,
        { description?: string; headers?: Record<string, unknown> }
      >;
      expect(responses['200']?.description).toMatch(/price/);
      expect(responses['200']?.headers).toHaveProperty('Price-Attestation');
    },
  );
});
