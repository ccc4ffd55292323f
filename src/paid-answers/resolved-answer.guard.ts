import {
  Inject,
  Injectable,
  type CanActivate,
  type ExecutionContext,
  type Type,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import {
  keepResolvedAnswer,
  type AnswerResolver,
  type AnswerResolverType,
} from './answer-resolver.js';

const guards = new Map<AnswerResolverType, Type<CanActivate>>();

/**
 * The guard that runs `resolver` for a route and keeps its value for `@Resolved()` and the
 * attestation. One guard class per resolver class, built by Nest in the route's module with the
 * resolver injected: a resolver the module cannot provide stops start-up, naming it.
 */
export function resolverGuard(resolver: AnswerResolverType): Type<CanActivate> {
  const known = guards.get(resolver);
  if (known !== undefined) return known;

  @Injectable()
  class ResolvedAnswerGuard implements CanActivate {
    constructor(@Inject(resolver) private readonly answers: AnswerResolver<unknown>) {}

    async canActivate(context: ExecutionContext): Promise<boolean> {
      const request = context.switchToHttp().getRequest<FastifyRequest>();
      keepResolvedAnswer(request, await this.answers.resolve(request));
      return true;
    }
  }
  Object.defineProperty(ResolvedAnswerGuard, 'name', { value: `${resolver.name}Guard` });
  guards.set(resolver, ResolvedAnswerGuard);
  return ResolvedAnswerGuard;
}
