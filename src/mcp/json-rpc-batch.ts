import { isRecord } from '../common/json.js';

/** A JSON-RPC error answered for the whole POST (no `id`: it is not any one request's). */
export interface JsonRpcRefusal {
  readonly jsonrpc: '2.0';
  readonly id: null;
  readonly error: { readonly code: number; readonly message: string };
}

/** JSON-RPC's codes for a body that is no JSON, and one that is no valid request. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

export function refusal(code: number, message: string): JsonRpcRefusal {
  return { jsonrpc: '2.0', id: null, error: { code, message } };
}

/** What is checked of a POST's messages before any of them runs. */
export type CheckedBatch =
  | { readonly kind: 'refused'; readonly refusal: JsonRpcRefusal }
  | {
      readonly kind: 'checked';
      /** The body to run: without requests the same batch cancels (they get no answer). */
      readonly body: unknown;
      /** The requests that will run, by method (`tools/call`, `tools/list`…). */
      readonly methods: readonly string[];
    };

/**
 * The messages of one POST, checked before anything runs or is sold: two requests with the same
 * id would be run (and charged) twice with one answer, so the batch is refused; a request that
 * a `notifications/cancelled` of the same batch cancels is never run (stateless, a cancellation
 * can only come in the same POST). What is no JSON-RPC message at all is left to the MCP
 * transport, which refuses it with its own JSON-RPC error.
 */
export function checkBatch(body: unknown): CheckedBatch {
  const messages = Array.isArray(body) ? body : [body];
  const ids = new Set<unknown>();
  for (const message of messages) {
    if (!isRequest(message)) continue;
    if (ids.has(message['id'])) {
      return {
        kind: 'refused',
        refusal: refusal(
          INVALID_REQUEST,
          `Invalid Request: the id ${JSON.stringify(message['id'])} is used by two requests of ` +
            'this batch; nothing was run. Give every request its own id.',
        ),
      };
    }
    ids.add(message['id']);
  }
  const cancelled = new Set<unknown>();
  for (const message of messages) {
    if (isRecord(message) && message['method'] === 'notifications/cancelled') {
      const params = message['params'];
      if (isRecord(params)) cancelled.add(params['requestId']);
    }
  }
  const kept = messages.filter((message) => !isRequest(message) || !cancelled.has(message['id']));
  return {
    kind: 'checked',
    body: Array.isArray(body) ? kept : body,
    methods: kept.filter(isRequest).map((message) => String(message['method'])),
  };
}

function isRequest(message: unknown): message is Record<string, unknown> {
  return (
    isRecord(message) &&
    typeof message['method'] === 'string' &&
    (typeof message['id'] === 'string' || typeof message['id'] === 'number')
  );
}
