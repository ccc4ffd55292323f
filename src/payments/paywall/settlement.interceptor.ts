import {
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { catchError, from, mergeMap, type Observable } from 'rxjs';
import type { RequestWithPayment } from './payment-errors.js';

/**
 * Closes the sale the payment guard opened, after the handler succeeded and before any byte of
 * the body is sent: the scheme settles (or records what is owed) and the body goes out with the
 * receipt, or the scheme's error is the answer. A handler that fails sells nothing: the sale is
 * abandoned and what it reserved given back. A request that reaches it without an open sale is
 * refused.
 */
@Injectable()
export class SettlementInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<RequestWithPayment>();
    const reply = http.getResponse<FastifyReply>();
    const sale = request.x402Sale;
    if (sale === undefined) {
      // Fail closed: a paid handler must never answer without a verified, claimed payment.
      throw new Error(
        `${request.method} ${request.url}: paid route reached without a verified payment`,
      );
    }
    return next.handle().pipe(
      catchError(async (error: unknown) => {
        await sale.abandon('handler_threw');
        throw error;
      }),
      mergeMap((body) => from(sale.close(request, reply, body))),
    );
  }
}
