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
    'Price-Attestation',
    'Retry-After',
    'X-Request-Id',
  ],
  maxAge: 600,
};
