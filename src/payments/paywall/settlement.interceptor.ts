import {
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { catchError, from, mergeMap, type Observable } from 'rxjs';
import { noteSale } from '../../logging/request-log.js';
import type { RequestWithPayment } from './payment-errors.js';
import { PaymentIntake } from './payment-intake.js';
import type { OpenSale } from './seller-scheme.js';

/**
 * Closes the sale the payment guard opened, after the handler succeeded and before any byte of
 * the body is sent: the scheme settles (or records what is owed) and says how it went, and
 * PaymentIntake turns that into the answer: the body with the receipt (and the sale on the
 * request's access line), a 402 with the reason, or 502 `settlement_unknown`. A handler that
 * fails sells nothing: the sale is abandoned and what it reserved given back. A request that
 * reaches it without an open sale is refused.
 */
@Injectable()
export class SettlementInterceptor implements NestInterceptor {
  constructor(private readonly intake: PaymentIntake) {}

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
      mergeMap((body) => from(this.close(sale, request, reply, body))),
    );
  }

  /** The sale closed, its receipt on the reply; a sale is noted on the request's access line. */
  private async close(
    sale: OpenSale,
    request: RequestWithPayment,
    reply: FastifyReply,
    body: unknown,
  ): Promise<unknown> {
    const headers = await this.intake.close(request, reply, sale, body);
    void reply.headers(headers);
    const { amount, network } = sale.requirement;
    noteSale({ payer: sale.payer, amount, network });
    return body;
  }
}
