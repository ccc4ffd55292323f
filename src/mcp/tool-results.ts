import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { ApiError } from '../common/api-error.js';
import { problem, type ProblemDetails } from '../common/problem-details.js';

/**
 * Tool results as the x402 MCP transport spells them: a result's JSON in `structuredContent` and
 * as text, the settlement in `_meta["x402/payment-response"]` and the answer's signed price
 * attestation (its route's `Price-Attestation` header) in `_meta["x402/price-attestation"]`; a
 * payment required as a tool error
 * carrying the `PaymentRequired` (tool-result binding) or, for a client that advertised the
 * `org.x402/payment` extension, as a `payment_required` result (extension binding).
 */

export const PAYMENT_META = 'x402/payment';
export const PAYMENT_RESPONSE_META = 'x402/payment-response';
export const PRICE_ATTESTATION_META = 'x402/price-attestation';
export const PAYMENT_EXTENSION = 'org.x402/payment';
const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';

export type ToolResult = Record<string, unknown> & {
  content: { type: 'text'; text: string }[];
};

/** A tool's answer: the same JSON as its HTTP route's body, its receipt and attestation. */
export function answered(
  body: unknown,
  settlement?: SettleResponse,
  attestation?: string,
): ToolResult {
  const meta = {
    ...(settlement === undefined ? {} : { [PAYMENT_RESPONSE_META]: settlement }),
    ...(attestation === undefined ? {} : { [PRICE_ATTESTATION_META]: attestation }),
  };
  return {
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: body,
    ...(Object.keys(meta).length === 0 ? {} : { _meta: meta }),
  };
}

/** A tool error with the problem the HTTP route would answer (same `code`); nothing charged. */
export function failed(details: ProblemDetails): ToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(details) }],
    structuredContent: details,
  };
}

export function failedWith(error: ApiError): ToolResult {
  return failed(problem(error.status, error.code, error.detail));
}

/** Payment required (or refused, with the reason in `error`), in the binding the client reads. */
export function paymentRequired(required: PaymentRequired, extension: boolean): ToolResult {
  if (extension) {
    return { resultType: 'payment_required', paymentRequired: required, content: [] };
  }
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(required) }],
    structuredContent: required,
  };
}

/** Whether this request's MCP client capabilities name the `org.x402/payment` extension. */
export function advertisesPaymentExtension(meta: Record<string, unknown> | undefined): boolean {
  const capabilities = meta?.[CLIENT_CAPABILITIES_META] as
    { extensions?: Record<string, unknown> } | undefined;
  return capabilities?.extensions?.[PAYMENT_EXTENSION] !== undefined;
}
