import {
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { from, mergeMap, type Observable } from 'rxjs';
import type { RequestWithPayment } from '../payments/index.js';
import { RateLimiter } from './rate-limit.guard.js';

/**
 * After every guard, before the handler: a request whose payment the payment guard verified and
 * claimed (an open sale) has its count on arrival taken back, so a buyer is never counted for
 * what it is buying, however soon it sends its next request.
 */
@Injectable()
export class RateLimitInterceptor implements NestInterceptor {
  constructor(private readonly limiter: RateLimiter) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<RequestWithPayment>();
    if (request.x402Sale === undefined) return next.handle();
    return from(this.limiter.saleOpened(request)).pipe(mergeMap(() => next.handle()));
  }
}
