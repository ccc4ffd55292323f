import { createParamDecorator, type ExecutionContext, type Type } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/**
 * Checks a request for a paid answer and resolves what it will be answered from, before any
 * payment is asked for: throw what to answer instead (an ApiError or an HttpException: 400 for
 * malformed input, 404 for something unknown, 503 while the data is not there). What it
 * resolves is what the handler serves, so the refusal and the body come from the same read.
 */
export interface AnswerResolver<T> {
  resolve(request: FastifyRequest): Promise<T>;
}

/** A resolver class, as a route names it (`@Paid({ resolver })`); Nest builds it with its deps. */
export type AnswerResolverType<T = unknown> = Type<AnswerResolver<T>>;

/** Route metadata: the resolver class a paid route named. */
export const ANSWER_RESOLVER = Symbol('AnswerResolver');

const resolved = new WeakMap<FastifyRequest, unknown>();

/** Keeps what the route's resolver resolved for `request`. */
export function keepResolvedAnswer(request: FastifyRequest, value: unknown): void {
  resolved.set(request, value);
}

/** What the route's resolver resolved for `request`; undefined when none ran. */
export function resolvedAnswerOf(request: FastifyRequest): unknown {
  return resolved.get(request);
}

/** The handler parameter holding what the route's resolver resolved. */
export const Resolved = createParamDecorator((_data: unknown, context: ExecutionContext) => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  if (!resolved.has(request)) {
    throw new Error(`${request.method} ${request.url}: no resolver ran for this route`);
  }
  return resolved.get(request);
});
