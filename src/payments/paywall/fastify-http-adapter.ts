import type { HTTPAdapter } from '@x402/core/server';
import type { FastifyRequest } from 'fastify';
import { queryOf, routedPath } from './routed-path.js';
import { PAYMENT_SIGNATURE_HEADER, X_PAYMENT_HEADER } from './x402-wire.js';

/**
 * `@x402/core`'s view of a Fastify request. The payment header it sees is the one the guard
 * decoded and checked (a v1 payment arrives here in its v2 form), never the raw request header.
 */
export class FastifyHttpAdapter implements HTTPAdapter {
  constructor(
    private readonly request: FastifyRequest,
    private readonly publicUrl: string | undefined,
    private readonly paymentSignature: string | undefined,
  ) {}

  getHeader(name: string): string | undefined {
    const lower = name.toLowerCase();
    if (lower === PAYMENT_SIGNATURE_HEADER) return this.paymentSignature;
    if (lower === X_PAYMENT_HEADER) return undefined;
    const value = this.request.headers[lower];
    return Array.isArray(value) ? value.join(', ') : value;
  }

  getMethod(): string {
    return this.request.method;
  }

  /** The routed path, normalised (routedPath): a receipt signs it. */
  getPath(): string {
    return routedPath(this.request);
  }

  /**
   * The resource URL: PUBLIC_URL + routed path + query when set, else the scheme and host the
   * client asked for (Fastify reads them from X-Forwarded-Proto / X-Forwarded-Host sent by a
   * TRUST_PROXY proxy).
   */
  getUrl(): string {
    const base = this.publicUrl ?? `${this.request.protocol}://${this.request.host}`;
    return `${base}${routedPath(this.request)}${queryOf(this.request)}`;
  }

  getAcceptHeader(): string {
    return this.request.headers.accept ?? '';
  }

  getUserAgent(): string {
    return this.request.headers['user-agent'] ?? '';
  }
}
