import 'reflect-metadata';
import { GUARDS_METADATA, INTERCEPTORS_METADATA } from '@nestjs/common/constants.js';
import { ANSWER_RESOLVER, resolverGuard, type AnswerResolver } from '../../paid-answers/index.js';
import { Metered } from './metered.decorator.js';
import { METERED_UNIT, PAID_PRICE, type UsdPrice } from './paid-price.js';
import { DecodedPaymentGuard } from './presented-payment.guard.js';

const API_EXTENSION = 'swagger/apiExtension';
const API_RESPONSE = 'swagger/apiResponse';

class ExampleResolver implements AnswerResolver<string> {
  resolve(): Promise<string> {
    return Promise.resolve('resolved');
  }
}

class Example {
  @Metered({
    price: '$0.0001',
    unit: 'update',
    description: 'Updates.',
    resolver: ExampleResolver,
  })
  stream(): void {
    return undefined;
  }
}

const method = (Example.prototype as unknown as Record<string, object>)['stream'] as object;

describe('@Metered', () => {
  it('records the unit price and the unit, and runs only the header decoding and the resolver before the handler', () => {
    expect(Reflect.getMetadata(PAID_PRICE, method)).toBe('$0.0001');
    expect(Reflect.getMetadata(METERED_UNIT, method)).toBe('update');
    expect(Reflect.getMetadata(ANSWER_RESOLVER, method)).toBe(ExampleResolver);
    // junk payment headers are a 400 first; no payment guard, no settlement interceptor: the
    // handler opens and meters the sale
    expect(Reflect.getMetadata(GUARDS_METADATA, method)).toEqual([
      DecodedPaymentGuard,
      resolverGuard(ExampleResolver),
    ]);
    expect(Reflect.getMetadata(INTERCEPTORS_METADATA, method)).toBeUndefined();
  });

  it('documents the price per unit, the text/event-stream 200 and the 402', () => {
    expect(Reflect.getMetadata(API_EXTENSION, method)).toEqual({
      'x-x402-price': { amount: '0.0001', currency: 'USD', per: 'update' },
    });
    const responses = Reflect.getMetadata(API_RESPONSE, method) as Record<string, unknown>;
    expect(responses['200']).toMatchObject({
      content: { 'text/event-stream': { schema: { type: 'string' } } },
    });
    expect(responses['402']).toMatchObject({
      description: expect.stringContaining('`batch-settlement` only') as string,
    });
  });

  it.each(['$0', '0.0001', '$-1'])('refuses %s at class definition', (price) => {
    expect(() => {
      class Bad {
        @Metered({ price: price as UsdPrice, unit: 'update', description: 'x' })
        stream(): void {
          return undefined;
        }
      }
      return Bad;
    }).toThrow(/not a positive USD price/);
  });
});
