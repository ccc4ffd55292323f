import 'reflect-metadata';
import { NotFoundException, type ExecutionContext } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import type { FastifyRequest } from 'fastify';
import { Resolved, resolvedAnswerOf, type AnswerResolver } from './answer-resolver.js';
import { resolverGuard } from './resolved-answer.guard.js';

type Guard = { canActivate(context: ExecutionContext): Promise<boolean> };

/** Resolves a word's length; an unknown word is a 404. */
class WordLength implements AnswerResolver<number> {
  readonly seen: string[] = [];

  resolve(request: FastifyRequest): Promise<number> {
    const word = (request.params as { word: string }).word;
    this.seen.push(word);
    if (word === 'nope') return Promise.reject(new NotFoundException(`${word} is unknown`));
    return Promise.resolve(word.length);
  }
}

function contextOf(request: FastifyRequest): ExecutionContext {
  return { switchToHttp: () => ({ getRequest: () => request }) } as unknown as ExecutionContext;
}

function requestFor(word: string): FastifyRequest {
  return { method: 'GET', url: `/v1/words/${word}`, params: { word } } as unknown as FastifyRequest;
}

function guardWith(resolver: WordLength): Guard {
  const GuardClass = resolverGuard(WordLength) as new (resolver: WordLength) => Guard;
  return new GuardClass(resolver);
}

/** The function Nest calls for a handler parameter marked with `@Resolved()`. */
function resolvedParameter(): (data: unknown, context: ExecutionContext) => unknown {
  class Handler {
    answer(@Resolved() _value: unknown): void {}
  }
  const args = Reflect.getMetadata(ROUTE_ARGS_METADATA, Handler, 'answer') as Record<
    string,
    { factory: (data: unknown, context: ExecutionContext) => unknown }
  >;
  const [parameter] = Object.values(args);
  if (parameter === undefined) throw new Error('@Resolved() left no parameter metadata');
  return parameter.factory;
}

describe('resolverGuard', () => {
  it('is one guard class per resolver class, named after it, asking Nest for the resolver', () => {
    const guard = resolverGuard(WordLength);
    expect(resolverGuard(WordLength)).toBe(guard);
    expect(guard.name).toBe('WordLengthGuard');
    class Other extends WordLength {}
    expect(resolverGuard(Other)).not.toBe(guard);
    expect(Reflect.getMetadata('self:paramtypes', guard)).toEqual([
      { index: 0, param: WordLength },
    ]);
  });

  it('runs the resolver and keeps its value for the handler and the attestation', async () => {
    const resolver = new WordLength();
    const request = requestFor('apple');
    await expect(guardWith(resolver).canActivate(contextOf(request))).resolves.toBe(true);
    expect(resolver.seen).toEqual(['apple']);
    expect(resolvedAnswerOf(request)).toBe(5);
    expect(resolvedParameter()(undefined, contextOf(request))).toBe(5);
  });

  it("throws the resolver's refusal and keeps nothing", async () => {
    const request = requestFor('nope');
    await expect(guardWith(new WordLength()).canActivate(contextOf(request))).rejects.toThrow(
      NotFoundException,
    );
    expect(resolvedAnswerOf(request)).toBeUndefined();
  });
});

describe('@Resolved()', () => {
  it('fails loudly on a route whose resolver did not run', () => {
    expect(() => resolvedParameter()(undefined, contextOf(requestFor('apple')))).toThrow(
      'GET /v1/words/apple: no resolver ran for this route',
    );
  });
});
