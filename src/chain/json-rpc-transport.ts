// src/chain: chain access over JSON-RPC, used by payments (settlement) and health (readiness).
import http from 'node:http';
import https from 'node:https';
import {
  custom,
  HttpRequestError,
  RpcRequestError,
  TimeoutError,
  type CustomTransport,
} from 'viem';

export interface JsonRpcTransportOptions {
  /** How long one call may take, from the request to the whole answer. */
  readonly timeoutMs: number;
  /** Told each call's method just before its request is written to the connection. */
  readonly onRequest?: (method: string, params: unknown) => void;
  /** The largest answer read before the call fails; a node that sends more is not trusted. */
  readonly maxResponseBytes?: number;
}

/**
 * Idle connections are closed after this, before common servers' keep-alive limits (5 s). A
 * server's shorter `Keep-Alive: timeout=N` hint is honoured by node's agent, which closes the
 * connection a second before the server would.
 */
const IDLE_CONNECTION_MS = 4_000;

/** Far above any answer the paid path asks for (a receipt, a nonce, a balance, a gas price). */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/**
 * A viem transport for JSON-RPC over HTTP(S) on kept-alive `node:http` connections, for the
 * chain calls of the paid path. viem's `http` transport goes through `fetch`, which costs about
 * three times the CPU per call (against anvil: ~560 µs against ~170 µs for an `eth_chainId`),
 * and a paid `exact` call makes six. Failures keep viem's `http` transport's classes, so
 * callers tell them apart the same way: no answer in time → `TimeoutError`; no answer, an HTTP
 * error status or an answer that is not JSON → `HttpRequestError`; the node's JSON-RPC error
 * → `RpcRequestError` (which viem then maps to its specific errors by code). As with viem, an
 * HTTP error status is an `HttpRequestError` even when its body is a JSON-RPC error. An answer
 * larger than `maxResponseBytes` is an `HttpRequestError` too, read no further. No retries: a
 * caller that retries knows whether the call may be repeated.
 */
export function jsonRpcTransport(url: string, options: JsonRpcTransportOptions): CustomTransport {
  const post = jsonRpcPoster(url, options);
  return custom(
    { request: ({ method, params }: { method: string; params?: unknown }) => post(method, params) },
    { key: 'http', name: 'JSON-RPC over HTTP', retryCount: 0 },
  );
}

type Poster = (method: string, params: unknown) => Promise<unknown>;

function jsonRpcPoster(
  url: string,
  { timeoutMs, onRequest, maxResponseBytes = MAX_RESPONSE_BYTES }: JsonRpcTransportOptions,
): Poster {
  const endpoint = new URL(url);
  const protocol = endpoint.protocol === 'https:' ? https : http;
  const agent = new protocol.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS });
  let lastId = 0;
  return (method, params) => {
    lastId += 1;
    const call = { jsonrpc: '2.0', id: lastId, method, params: params ?? [] };
    const body = JSON.stringify(call);
    return new Promise((resolve, reject) => {
      const fail = (error: Error): void => {
        clearTimeout(timer);
        request.destroy();
        reject(error);
      };
      const request = protocol.request(endpoint, {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      const timer = setTimeout(() => {
        fail(new TimeoutError({ body: call, url }));
      }, timeoutMs);
      request.on('error', (cause) => {
        fail(new HttpRequestError({ body: call, url, cause, details: cause.message }));
      });
      request.on('response', (response) => {
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received <= maxResponseBytes) chunks.push(chunk);
          else {
            const details = `answer larger than ${String(maxResponseBytes)} bytes`;
            fail(new HttpRequestError({ body: call, url, status, details }));
          }
        });
        response.on('error', (cause) => {
          fail(new HttpRequestError({ body: call, url, cause, details: cause.message }));
        });
        response.on('end', () => {
          clearTimeout(timer);
          const answer = answerOf(status, Buffer.concat(chunks).toString('utf8'));
          if ('result' in answer) resolve(answer.result);
          else if ('rpcError' in answer) {
            reject(new RpcRequestError({ body: call, error: answer.rpcError, url }));
          } else {
            reject(new HttpRequestError({ body: call, url, ...answer.httpError }));
          }
        });
      });
      onRequest?.(method, call.params);
      request.end(body);
    });
  };
}

type Answer =
  | { readonly result: unknown }
  | { readonly rpcError: { code: number; message: string; data?: unknown } }
  | { readonly httpError: { status: number; details: string } };

/** What an HTTP answer says about the call, read the way viem's `http` transport reads it. */
function answerOf(status: number, text: string): Answer {
  const ok = status >= 200 && status < 300;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { httpError: { status, details: text.slice(0, 500) || `HTTP ${String(status)}` } };
  }
  if (typeof parsed !== 'object' || parsed === null) {
    return { httpError: { status, details: text.slice(0, 500) } };
  }
  const { error } = parsed as { error?: unknown };
  if (!ok) {
    const details = error === undefined ? `HTTP ${String(status)}` : JSON.stringify(error);
    return { httpError: { status, details } };
  }
  if (error !== undefined && error !== null) {
    return { rpcError: rpcErrorOf(error) };
  }
  if (!('result' in parsed)) return { httpError: { status, details: text.slice(0, 500) } };
  return { result: parsed.result };
}

function rpcErrorOf(error: unknown): { code: number; message: string; data?: unknown } {
  const { code, message, data } = (typeof error === 'object' ? error : {}) as {
    code?: unknown;
    message?: unknown;
    data?: unknown;
  };
  return {
    code: typeof code === 'number' ? code : -32603,
    message: typeof message === 'string' ? message : JSON.stringify(error),
    ...(data === undefined ? {} : { data }),
  };
}
