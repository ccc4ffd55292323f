import {
  Catch,
  HttpException,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ErrorCode, codeForStatus } from './api-error.js';
import type { MethodTable } from './method-table.js';
import { PreparedResponseException } from './prepared-response.exception.js';
import { PROBLEM_CONTENT_TYPE, problem, type ProblemDetails } from './problem-details.js';

/**
 * The one place errors become HTTP: domain ApiErrors keep their code, Nest's HTTP exceptions
 * are mapped by status, anything else is a logged 500 that reveals nothing internal. Prepared
 * responses (the x402 challenge) go out exactly as prepared.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger(ProblemDetailsFilter.name);

  /** `methods`: turns the not-found of a known path asked with another method into a 405. */
  constructor(private readonly methods?: MethodTable) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    if (exception instanceof PreparedResponseException) {
      void reply.status(exception.getStatus()).headers(exception.headers).send(exception.body);
      return;
    }
    const request = http.getRequest<FastifyRequest>();
    const instance = request.url.split('?')[0];

    if (exception instanceof ApiError) {
      for (const [name, value] of Object.entries(exception.headers)) void reply.header(name, value);
      this.send(reply, problem(exception.status, exception.code, exception.detail, instance));
      return;
    }
    const unread =
      exception instanceof HttpException ? exception.getStatus() : clientErrorStatus(exception);
    if (unread !== undefined && unread < 500 && answersJsonRpc(request)) {
      // a JSON-RPC client reads JSON-RPC errors: a body it could not send right is one too
      void reply
        .status(unread)
        .header('content-type', 'application/json; charset=utf-8')
        .send(unreadableJsonRpc(unread));
      return;
    }
    if (exception instanceof HttpException) {
      const allowed = exception.getStatus() === 404 ? (this.methods?.allowed(request) ?? []) : [];
      if (allowed.length > 0 && !allowed.includes(request.method)) {
        const detail = `${request.method} is not allowed here; this path answers ${allowed.join(', ')}.`;
        void reply.header('allow', allowed.join(', '));
        this.send(reply, problem(405, ErrorCode.MethodNotAllowed, detail, instance));
        return;
      }
      this.send(reply, fromHttpException(exception, instance));
      return;
    }
    const clientStatus = clientErrorStatus(exception);
    if (clientStatus !== undefined) {
      // A request body that was aborted or unreadable: the client's fault, not an incident.
      this.logger.debug(`${request.method} ${instance}: ${(exception as Error).message}`);
      this.send(
        reply,
        problem(
          clientStatus,
          codeForStatus(clientStatus),
          'The request could not be read.',
          instance,
        ),
      );
      return;
    }
    this.logger.error(
      `Unhandled error on ${request.method} ${instance}`,
      exception instanceof Error ? exception.stack : String(exception),
    );
    this.send(
      reply,
      problem(500, ErrorCode.InternalError, 'The server failed to answer.', instance),
    );
  }

  private send(reply: FastifyReply, body: ProblemDetails): void {
    void reply.status(body.status).header('content-type', PROBLEM_CONTENT_TYPE).send(body);
  }
}

/** Route config (`@RouteConfig(JSON_RPC_ROUTE)`) of a route whose errors are JSON-RPC's. */
export const JSON_RPC_ROUTE = { jsonRpc: true } as const;

function answersJsonRpc(request: FastifyRequest): boolean {
  const config = request.routeOptions.config as { jsonRpc?: unknown } | undefined;
  return config?.jsonRpc === true;
}

/** An unreadable body on a JSON-RPC route: JSON-RPC's parse error (-32700), or invalid request. */
function unreadableJsonRpc(status: number): object {
  const error =
    status === 400
      ? { code: -32700, message: 'Parse error: the body is not valid JSON.' }
      : { code: -32600, message: 'Invalid Request: the body could not be read.' };
  return { jsonrpc: '2.0', id: null, error };
}

/** The 4xx status Fastify put on an error it raised while reading the request, if any. */
function clientErrorStatus(exception: unknown): number | undefined {
  if (!(exception instanceof Error) || !('statusCode' in exception)) return undefined;
  const status = exception.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}

function fromHttpException(exception: HttpException, instance: string | undefined): ProblemDetails {
  const status = exception.getStatus();
  const code = codeForStatus(status);
  const detail = status >= 500 ? 'The server failed to answer.' : exception.message;
  return problem(status, code, detail, instance);
}
