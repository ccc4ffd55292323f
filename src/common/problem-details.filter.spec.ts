import {
  BadRequestException,
  Logger,
  UnsupportedMediaTypeException,
  type ArgumentsHost,
} from '@nestjs/common';
import { jest } from '@jest/globals';
import { JSON_RPC_ROUTE, ProblemDetailsFilter } from './problem-details.filter.js';

interface Sent {
  status?: number;
  body?: unknown;
}

function httpHost(sent: Sent, config: object = {}): ArgumentsHost {
  const reply = {
    status(code: number) {
      sent.status = code;
      return reply;
    },
    header() {
      return reply;
    },
    send(body: unknown) {
      sent.body = body;
      return reply;
    },
  };
  const request = { method: 'GET', url: '/v1/assets?x=1', routeOptions: { config } };
  return {
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }),
  } as unknown as ArgumentsHost;
}

function fastifyError(message: string, statusCode: number): Error {
  return Object.assign(new Error(message), {
    code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
    statusCode,
  });
}

describe('ProblemDetailsFilter', () => {
  let errors: jest.Spied<Logger['error']>;
  let debug: jest.Spied<Logger['debug']>;

  beforeEach(() => {
    errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    debug = jest.spyOn(Logger.prototype, 'debug').mockImplementation(() => undefined);
  });
  afterEach(() => {
    errors.mockRestore();
    debug.mockRestore();
  });

  it('answers a request Fastify could not read (an aborted body) with its 4xx, without an error log', () => {
    const sent: Sent = {};
    new ProblemDetailsFilter().catch(fastifyError('Request aborted', 400), httpHost(sent));
    expect(sent).toEqual({
      status: 400,
      body: {
        type: 'about:blank',
        title: 'Bad Request',
        status: 400,
        detail: 'The request could not be read.',
        code: 'bad_request',
        instance: '/v1/assets',
      },
    });
    expect(errors).not.toHaveBeenCalled();
    expect(debug).toHaveBeenCalledWith('GET /v1/assets: Request aborted');
  });

  it('answers a body a JSON-RPC route could not read with a JSON-RPC error', () => {
    const parse: Sent = {};
    new ProblemDetailsFilter().catch(
      new BadRequestException('bad JSON'),
      httpHost(parse, JSON_RPC_ROUTE),
    );
    expect(parse).toEqual({
      status: 400,
      body: {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: 'Parse error: the body is not valid JSON.' },
      },
    });
    const media: Sent = {};
    new ProblemDetailsFilter().catch(
      new UnsupportedMediaTypeException(),
      httpHost(media, JSON_RPC_ROUTE),
    );
    expect(media).toMatchObject({ status: 415, body: { error: { code: -32600 } } });
    const unread: Sent = {};
    new ProblemDetailsFilter().catch(
      fastifyError('Request aborted', 400),
      httpHost(unread, JSON_RPC_ROUTE),
    );
    expect(unread).toMatchObject({ status: 400, body: { error: { code: -32700 } } });
  });

  it('logs anything else as an incident and reveals nothing of it', () => {
    const sent: Sent = {};
    new ProblemDetailsFilter().catch(new Error('database password is hunter2'), httpHost(sent));
    expect(sent.status).toBe(500);
    expect(JSON.stringify(sent.body)).not.toContain('hunter2');
    expect(errors).toHaveBeenCalledTimes(1);
  });

  it('does not take a 5xx status from an unknown error', () => {
    const sent: Sent = {};
    new ProblemDetailsFilter().catch(fastifyError('boom', 503), httpHost(sent));
    expect(sent.status).toBe(500);
    expect(errors).toHaveBeenCalledTimes(1);
  });
});
