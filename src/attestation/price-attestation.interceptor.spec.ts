import { Logger, type CallHandler, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { lastValueFrom, of } from 'rxjs';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { jest } from '@jest/globals';
import { resolverGuard, type AnswerResolver } from '../paid-answers/index.js';
import { answerHeadersOf } from '../payments/index.js';
import type { AttestableAnswer } from './attestable-answer.js';
import { AttestationSigner } from './attestation-signer.js';
import { attestationProblem } from './price-attestation.js';
import { PriceAttestationInterceptor } from './price-attestation.interceptor.js';
import { PriceAttestor } from './price-attestor.js';

const KEY = generatePrivateKey();
const TIMESTAMP = '2026-11-20T12:00:00.000Z';

const ATTESTABLE: AttestableAnswer = {
  attestedClaims: () => ({
    currency: 'USD',
    timestamp: Date.parse(TIMESTAMP),
    values: [{ symbol: 'apple', value: 1.25 }],
  }),
};

function contextOf(request: FastifyRequest): ExecutionContext {
  return {
    switchToHttp: () => ({ getRequest: () => request }),
    getHandler: () => contextOf,
    getClass: () => Object,
  } as unknown as ExecutionContext;
}

/** A request as the route's resolver guard leaves it: `answer` resolved for it. */
async function resolvedRequest(answer: unknown): Promise<FastifyRequest> {
  class Fixed implements AnswerResolver<unknown> {
    resolve(): Promise<unknown> {
      return Promise.resolve(answer);
    }
  }
  const Guard = resolverGuard(Fixed) as new (resolver: Fixed) => {
    canActivate(context: ExecutionContext): Promise<boolean>;
  };
  const request = { method: 'GET', url: '/v1/toy', routeOptions: {} } as FastifyRequest;
  await new Guard(new Fixed()).canActivate(contextOf(request));
  return request;
}

const handler: CallHandler = { handle: () => of('body') };

describe('PriceAttestationInterceptor', () => {
  const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);

  afterEach(() => errors.mockClear());
  afterAll(() => {
    errors.mockRestore();
  });

  it('hands the signed claims to the payments room as an answer header, body untouched', async () => {
    const interceptor = new PriceAttestationInterceptor(
      new PriceAttestor(new AttestationSigner(KEY)),
    );
    const request = await resolvedRequest(ATTESTABLE);
    expect(await lastValueFrom(interceptor.intercept(contextOf(request), handler))).toBe('body');
    const headers = await answerHeadersOf(request);
    const body = { timestamp: TIMESTAMP, currency: 'USD', price: { apple: 1.25 } };
    await expect(
      attestationProblem(headers['Price-Attestation'], body, privateKeyToAccount(KEY).address),
    ).resolves.toBeUndefined();
  });

  it('a signature that fails costs the header, not the answer', async () => {
    const interceptor = new PriceAttestationInterceptor(
      new PriceAttestor(new AttestationSigner(KEY)),
    );
    const broken: AttestableAnswer = {
      attestedClaims: () => {
        throw new Error('no snapshot');
      },
    };
    const request = await resolvedRequest(broken);
    expect(await lastValueFrom(interceptor.intercept(contextOf(request), handler))).toBe('body');
    expect(await answerHeadersOf(request)).toEqual({});
    expect(errors).toHaveBeenCalledWith(expect.stringContaining('could not sign'));
  });

  it('an answer that says nothing to sign goes out unsigned, and says so in the log', async () => {
    const interceptor = new PriceAttestationInterceptor(
      new PriceAttestor(new AttestationSigner(KEY)),
    );
    const request = await resolvedRequest({ price: 1 });
    expect(await lastValueFrom(interceptor.intercept(contextOf(request), handler))).toBe('body');
    expect(await answerHeadersOf(request)).toEqual({});
    expect(errors).toHaveBeenCalledWith(expect.stringContaining('says nothing to sign'));
  });

  it('adds nothing with attestation off', async () => {
    const interceptor = new PriceAttestationInterceptor(new PriceAttestor(null));
    const request = await resolvedRequest(ATTESTABLE);
    await lastValueFrom(interceptor.intercept(contextOf(request), handler));
    expect(await answerHeadersOf(request)).toEqual({});
  });
});
