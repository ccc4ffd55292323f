import { remoteText } from '../common/remote-text.js';
import {
  Injectable,
  Logger,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { mergeMap, type Observable } from 'rxjs';
import { resolvedQuotesOf } from '../tickers/ticker-request.guard.js';
import { ATTESTED } from './attested.decorator.js';
import { PRICE_ATTESTATION_HEADER } from './price-attestation.js';
import { PriceAttestor } from './price-attestor.js';

/**
 * Adds the Price-Attestation header to an `@Attested()` route's answer. Global, so it wraps
 * every route interceptor: its header is set only after settlement let the body go, never on a
 * 402, 502 or 503. The signature is looked up (or made, once per snapshot and selection) while
 * the handler and the settlement run.
 */
@Injectable()
export class PriceAttestationInterceptor implements NestInterceptor {
  private readonly logger = new Logger(PriceAttestationInterceptor.name);

  constructor(
    private readonly reflector: Reflector,
    private readonly attestor: PriceAttestor,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (this.reflector.get<boolean | undefined>(ATTESTED, context.getHandler()) !== true) {
      return next.handle();
    }
    const http = context.switchToHttp();
    const quotes = resolvedQuotesOf(http.getRequest<FastifyRequest>());
    const signing = quotes === undefined ? undefined : this.attestor.headerFor(quotes);
    if (signing === undefined) return next.handle();
    // the buyer has paid by the time this is read: a failed signature costs the header, not the 200
    const header = signing.catch((error: unknown) => {
      this.logger.error(`could not sign the price attestation: ${remoteText(error)}`);
      return undefined;
    });
    return next.handle().pipe(
      mergeMap(async (body: unknown) => {
        const value = await header;
        if (value !== undefined) {
          void http.getResponse<FastifyReply>().header(PRICE_ATTESTATION_HEADER, value);
        }
        return body;
      }),
    );
  }
}
