import 'reflect-metadata';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants.js';
import { ATTESTED, Attested } from './attested.decorator.js';
import { PriceAttestationInterceptor } from './price-attestation.interceptor.js';

/** @nestjs/swagger's response metadata key (its constants module is not exported). */
const API_RESPONSE = 'swagger/apiResponse';

class Example {
  @Attested()
  answer(): void {}
}

describe('@Attested', () => {
  const handler = Object.getOwnPropertyDescriptor(Example.prototype, 'answer')?.value as object;

  it('marks the handler and puts the attestation interceptor on this route alone', () => {
    expect(Reflect.getMetadata(ATTESTED, handler)).toBe(true);
    expect(Reflect.getMetadata(INTERCEPTORS_METADATA, handler)).toEqual([
      PriceAttestationInterceptor,
    ]);
    expect(Reflect.getMetadata(INTERCEPTORS_METADATA, Example)).toBeUndefined();
  });

  it('documents the header on the 200', () => {
    const responses = Reflect.getMetadata(API_RESPONSE, handler) as Record<
      string,
      { headers?: Record<string, unknown> }
    >;
    expect(Object.keys(responses['200']?.headers ?? {})).toEqual(['Price-Attestation']);
  });
});
