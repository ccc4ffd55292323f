/** Stable machine codes of every error the API answers with (the `code` member). */
export enum ErrorCode {
  InvalidSymbol = 'invalid_symbol',
  InvalidSymbolList = 'invalid_symbol_list',
  UnknownSymbol = 'unknown_symbol',
  PriceUnavailable = 'price_unavailable',
  InvalidPayment = 'invalid_payment',
  PaymentIdConflict = 'payment_id_conflict',
  FacilitatorUnavailable = 'facilitator_unavailable',
  ChainUnavailable = 'chain_unavailable',
  ShuttingDown = 'shutting_down',
  Unauthorized = 'unauthorized',
  SettlementUnknown = 'settlement_unknown',
  SharedStateUnavailable = 'shared_state_unavailable',
  RateLimited = 'rate_limited',
  RouteNotFound = 'route_not_found',
  BadRequest = 'bad_request',
  MethodNotAllowed = 'method_not_allowed',
  ClientClosedRequest = 'client_closed_request',
  InternalError = 'internal_error',
  StreamsUnavailable = 'streams_unavailable',
  StreamLimit = 'stream_limit',
  UnknownStream = 'unknown_stream',
  StreamCapacity = 'stream_capacity',
}

/** The HTTP status each code is answered with; services never speak HTTP themselves. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  [ErrorCode.InvalidSymbol]: 400,
  [ErrorCode.InvalidSymbolList]: 400,
  [ErrorCode.UnknownSymbol]: 404,
  [ErrorCode.PriceUnavailable]: 503,
  [ErrorCode.InvalidPayment]: 400,
  [ErrorCode.PaymentIdConflict]: 409,
  [ErrorCode.FacilitatorUnavailable]: 503,
  [ErrorCode.ChainUnavailable]: 503,
  [ErrorCode.ShuttingDown]: 503,
  [ErrorCode.Unauthorized]: 401,
  [ErrorCode.SettlementUnknown]: 502,
  [ErrorCode.SharedStateUnavailable]: 503,
  [ErrorCode.RateLimited]: 429,
  [ErrorCode.RouteNotFound]: 404,
  [ErrorCode.BadRequest]: 400,
  [ErrorCode.MethodNotAllowed]: 405,
  // nginx's code for a client that closed the connection before the answer; nobody reads it
  [ErrorCode.ClientClosedRequest]: 499,
  [ErrorCode.InternalError]: 500,
  [ErrorCode.StreamsUnavailable]: 503,
  [ErrorCode.StreamLimit]: 429,
  [ErrorCode.UnknownStream]: 404,
  [ErrorCode.StreamCapacity]: 503,
};

/** The code for an HTTP error raised outside our own code (routing, the framework). */
export function codeForStatus(status: number): ErrorCode {
  if (status === 404) return ErrorCode.RouteNotFound;
  if (status === 405) return ErrorCode.MethodNotAllowed;
  return status >= 500 ? ErrorCode.InternalError : ErrorCode.BadRequest;
}

/** A domain error: a stable code, a sentence for the client, and optional response headers. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
    this.name = 'ApiError';
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}
