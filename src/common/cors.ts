/** Browsers may pay: they can send the payment headers and read the x402 response headers. */
export const X402_CORS = {
  origin: true,
  methods: ['GET', 'OPTIONS'],
  allowedHeaders: [
    'Content-Type',
    'PAYMENT-SIGNATURE',
    'X-PAYMENT',
    'Access-Control-Expose-Headers',
    'X-Request-Id',
  ],
  exposedHeaders: [
    'PAYMENT-REQUIRED',
    'PAYMENT-RESPONSE',
    'X-PAYMENT-RESPONSE',
    'Retry-After',
    'X-Request-Id',
  ],
  maxAge: 600,
};

/**
 * What `@fastify/cors` with X402_CORS adds to the answer of a request without an `Origin`: the
 * same for every such request (the prepared answers send it themselves; a spec compares them
 * with the plugin's answers).
 */
export const CORS_HEADERS_WITHOUT_ORIGIN: Readonly<Record<string, string>> = {
  vary: 'Origin',
  'access-control-expose-headers': X402_CORS.exposedHeaders.join(', '),
};
