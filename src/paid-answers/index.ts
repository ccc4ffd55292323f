/**
 * A paid answer's seam, neutral ground between the products and the rooms that sell and sign
 * them: the resolver a route names in `@Paid({ resolver })`, the guard that runs it before any
 * payment is asked for, and `@Resolved()`, the handler's view of what it resolved.
 */
export {
  ANSWER_RESOLVER,
  Resolved,
  resolvedAnswerOf,
  type AnswerResolver,
  type AnswerResolverType,
} from './answer-resolver.js';
export { resolverGuard } from './resolved-answer.guard.js';
