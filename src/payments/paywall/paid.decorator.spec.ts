import 'reflect-metadata';
import { GUARDS_METADATA, INTERCEPTORS_METADATA } from '@nestjs/common/constants.js';
import { ANSWER_RESOLVER, resolverGuard, type AnswerResolver } from '../../paid-answers/index.js';
import { PAID_PRICE, type UsdPrice } from './paid-price.js';
import { Paid } from './paid.decorator.js';
import { PaymentGuard } from './payment.guard.js';
import { PresentedPaymentGuard } from './presented-payment.guard.js';
import { SettlementInterceptor } from './settlement.interceptor.js';

/** @nestjs/swagger's metadata keys (its constants module is not exported). */
const DECORATORS = {
  API_EXTENSION: 'swagger/apiExtension',
  API_RESPONSE: 'swagger/apiResponse',
  API_SECURITY: 'swagger/apiSecurity',
} as const;

class ExampleDto {
  readonly answer!: string;
}

class ExampleResolver implements AnswerResolver<string> {
  resolve(): Promise<string> {
    return Promise.resolve('resolved');
  }
}

class Example {
  @Paid({ price: '$0.004', response: ExampleDto, description: 'The answer.' })
  paid(): string {
    return 'paid';
  }

  @Paid({
    price: '$0.004',
    response: ExampleDto,
    description: 'The answer.',
    resolver: ExampleResolver,
  })
  resolved(): string {
    return 'resolved';
  }
}

const handler = (target: object, name: string): object =>
  (target as Record<string, object>)[name] as object;

describe('@Paid', () => {
  const method = handler(Example.prototype, 'paid');

  it('records the price as metadata', () => {
    expect(Reflect.getMetadata(PAID_PRICE, method)).toBe('$0.004');
  });

  it('adds the payment guards and the settlement interceptor, nothing else', () => {
    expect(Reflect.getMetadata(GUARDS_METADATA, method)).toEqual([
      PresentedPaymentGuard,
      PaymentGuard,
    ]);
    expect(Reflect.getMetadata(INTERCEPTORS_METADATA, method)).toEqual([SettlementInterceptor]);
  });

  it('documents the price, the 402 and the payment headers', () => {
    expect(Reflect.getMetadata(DECORATORS.API_EXTENSION, method)).toEqual({
      'x-x402-price': { amount: '0.004', currency: 'USD' },
    });
    expect(Object.keys(Reflect.getMetadata(DECORATORS.API_RESPONSE, method) as object)).toEqual(
      expect.arrayContaining(['200', '402', '409', '502']),
    );
    expect(Reflect.getMetadata(DECORATORS.API_SECURITY, method)).toEqual([
      { x402: [] },
      { 'x402-v1': [] },
    ]);
  });

  it('refuses a price that is not a positive USD amount, naming the route', () => {
    for (const price of ['$0', '$0.000', '0.002', '$-1', '$1e-3'] as UsdPrice[]) {
      expect(() => {
        class Misused {
          @Paid({ price, response: ExampleDto, description: 'x' })
          sell(): string {
            return 'x';
          }
        }
        return Misused;
      }).toThrow(`@Paid on Misused.sell: "${price}" is not a positive USD price such as $0.002`);
    }
  });

  it('refuses an undecodable payment header, then runs the named resolver, then the payment guard: 400/404/503 come before any 402', () => {
    const resolved = handler(Example.prototype, 'resolved');
    expect(Reflect.getMetadata(GUARDS_METADATA, resolved)).toEqual([
      PresentedPaymentGuard,
      resolverGuard(ExampleResolver),
      PaymentGuard,
    ]);
    expect(Reflect.getMetadata(ANSWER_RESOLVER, resolved)).toBe(ExampleResolver);
    expect(Reflect.getMetadata(INTERCEPTORS_METADATA, resolved)).toEqual([SettlementInterceptor]);
    expect(Reflect.getMetadata(ANSWER_RESOLVER, method)).toBeUndefined();
  });
});
