import {
  Injectable,
  Logger,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Observable } from 'rxjs';
import { remoteText } from '../common/remote-text.js';
import { resolvedAnswerOf } from '../paid-answers/index.js';
import { addAnswerHeaders } from '../payments/index.js';
import { isAttestable } from './attestable-answer.js';
import { PRICE_ATTESTATION_HEADER } from './price-attestation.js';
import { PriceAttestor } from './price-attestor.js';

/**
 * An `@Attested()` route's interceptor: once the payment guard let the request in, the answer's
 * signature is looked up (or made, once per `claimsKey`) while the handler and the settlement
 * run, and handed to the payments room as an answer header: it goes out, and is stored for a
 * payment-identifier retry, only with a sold 200, never with a 402, 502 or 503.
 */
@Injectable()
export class PriceAttestationInterceptor implements NestInterceptor {
  private readonly logger = new Logger(PriceAttestationInterceptor.name);

  constructor(private readonly attestor: PriceAttestor) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const answer = resolvedAnswerOf(request);
    if (!isAttestable(answer)) {
      // the buyer is paying by now: a route that resolves no attestable answer costs the header, not the 200
      this.logger.error(
        `${request.method} ${request.routeOptions.url ?? request.url}: the resolved answer says nothing to sign`,
      );
      return next.handle();
    }
    const signing = this.attestor.headerFor(answer);
    if (signing !== undefined) {
      addAnswerHeaders(
        request,
        signing.then(
          (value) => ({ [PRICE_ATTESTATION_HEADER]: value }),
          (error: unknown) => {
            this.logger.error(`could not sign the price attestation: ${remoteText(error)}`);
            return {};
          },
        ),
      );
    }
    return next.handle();
  }
}
