import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { codeForStatus } from './api-error.js';
import { PROBLEM_CONTENT_TYPE, problem } from './problem-details.js';

/**
 * Errors Fastify raises before routing (a URL it cannot decode, a bad content type), answered as
 * problem+json like every other error instead of Fastify's own body.
 */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const status = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 400;
  const detail =
    error.code === 'FST_ERR_BAD_URL'
      ? 'The request URL is malformed.'
      : 'The request could not be read.';
  void reply
    .status(status)
    .header('content-type', PROBLEM_CONTENT_TYPE)
    .send(problem(status, codeForStatus(status), detail, request.url.split('?')[0]));
}
