import { applyDecorators } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiResponse,
  getSchemaPath,
  type ApiResponseOptions,
} from '@nestjs/swagger';

type ContentObject = NonNullable<Extract<ApiResponseOptions, { content?: unknown }>['content']>;
import { ERROR_STATUS, ErrorCode } from './api-error.js';
import { PROBLEM_CONTENT_TYPE, problem } from './problem-details.js';
import { ProblemDetailsDto } from './problem-details.dto.js';

/** A detail each code is answered with, in the words the code really uses, for the examples. */
const EXAMPLE_DETAILS: Readonly<Record<ErrorCode, string>> = {
  [ErrorCode.InvalidSymbol]:
    '"BTC-USD" is not a symbol: use 1 to 15 letters or digits, such as BTC.',
  [ErrorCode.InvalidSymbolList]: 'Ask for 2 to 5 symbols; got 6.',
  [ErrorCode.UnknownSymbol]: 'DOGEX is not supported; GET /v1/assets lists the supported symbols.',
  [ErrorCode.PriceUnavailable]: 'No trustworthy price for BTC right now.',
  [ErrorCode.InvalidPayment]:
    'Malformed payment: PAYMENT-SIGNATURE is not base64 of a JSON object.',
  [ErrorCode.PaymentIdConflict]:
    'payment-identifier pay_0123456789abcdef was already used with a different payment or resource.',
  [ErrorCode.FacilitatorUnavailable]:
    'The payment facilitator cannot be reached right now; nothing was charged.',
  [ErrorCode.ChainUnavailable]:
    'Not ready: chain: the chain RPC did not answer eth_blockNumber within 1000 ms.',
  [ErrorCode.ShuttingDown]: 'Not ready: shutdown: the service is stopping.',
  [ErrorCode.Unauthorized]: 'GET /metrics needs the bearer token set in METRICS_TOKEN.',
  [ErrorCode.SettlementUnknown]:
    'The settlement could not be confirmed: receipt timed out. The payment may have been taken; it will not be accepted again.',
  [ErrorCode.SharedStateUnavailable]:
    'The shared state (payment ledger and prices, in Redis) cannot be reached right now (Redis connection lost); nothing was charged.',
  [ErrorCode.RateLimited]: 'Too many requests from 203.0.113.7: at most 600 per 60 s.',
  [ErrorCode.RouteNotFound]: 'Cannot GET /v2/ticker/BTC',
  [ErrorCode.BadRequest]: 'The request could not be read.',
  [ErrorCode.MethodNotAllowed]: 'POST is not allowed here; this path answers GET.',
  [ErrorCode.ClientClosedRequest]:
    'The client closed the connection before settlement; nothing was charged.',
  [ErrorCode.InternalError]: 'The server failed to answer.',
  [ErrorCode.StreamsUnavailable]:
    'Price streams are paid with batch-settlement, which this deployment does not sell.',
  [ErrorCode.StreamLimit]: '0x2a1f…9c3e has 5 streams open, the most one payer may have.',
  [ErrorCode.UnknownStream]: 'No stream 6f1c2b9e-… is open on this instance.',
  [ErrorCode.StreamCapacity]:
    'This instance serves its most streams (2000); retry later or elsewhere.',
};

const RETRY_AFTER = {
  'Retry-After': {
    description: 'Seconds to wait before asking again.',
    schema: { type: 'integer', minimum: 1 },
  },
};

/** Statuses whose answers carry `Retry-After`. */
const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 502, 503]);

/** One documented problem+json response: why it happens and the codes it carries. */
export interface ProblemResponse {
  readonly description: string;
  readonly codes: readonly ErrorCode[];
  /** Per code, the example's detail where this route words it otherwise than EXAMPLE_DETAILS. */
  readonly details?: Readonly<Partial<Record<ErrorCode, string>>>;
}

/**
 * The problem+json content of a response with one named example per code, each with the
 * status that code is answered with (so a 400 never shows a 404's example).
 */
export function problemContent(
  codes: readonly ErrorCode[],
  details: ProblemResponse['details'] = {},
): ContentObject {
  return {
    [PROBLEM_CONTENT_TYPE]: {
      schema: { $ref: getSchemaPath(ProblemDetailsDto) },
      examples: Object.fromEntries(
        codes.map((code) => [
          code,
          { value: problem(ERROR_STATUS[code], code, details[code] ?? EXAMPLE_DETAILS[code]) },
        ]),
      ),
    },
  };
}

/**
 * One problem+json response as the document writes it; codes answered with 429, 502 or 503
 * carry `Retry-After`. For a document step; handlers use ApiProblemResponse.
 */
export function problemResponse({ description, codes, details }: ProblemResponse): {
  description: string;
  content: ContentObject;
  headers?: typeof RETRY_AFTER;
} {
  const retries = codes.some((code) => RETRY_STATUSES.has(ERROR_STATUS[code]));
  return {
    description,
    content: problemContent(codes, details),
    ...(retries ? { headers: RETRY_AFTER } : {}),
  };
}

/** Documents one problem+json response (see problemResponse). */
export function ApiProblemResponse(
  status: number | 'default',
  response: ProblemResponse,
): MethodDecorator {
  return applyDecorators(
    ApiExtraModels(ProblemDetailsDto),
    ApiResponse({ status, ...problemResponse(response) }),
  );
}

/** Documents problem+json error responses, one per status, with what causes each. */
export function ApiProblemResponses(
  responses: Readonly<Record<number, ProblemResponse>>,
): MethodDecorator {
  return applyDecorators(
    ...Object.entries(responses).map(([status, response]) =>
      ApiProblemResponse(Number(status), response),
    ),
    ApiProblemResponse('default', {
      description: 'Unexpected error. Not charged.',
      codes: [ErrorCode.InternalError],
    }),
  );
}
