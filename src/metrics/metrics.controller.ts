import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { MetricsService } from './metrics.service.js';
import { METRICS_TOKEN_SETTINGS } from './metrics.settings.js';

/**
 * `GET /metrics` in the Prometheus text format, for a scraper rather than API clients (so not in
 * the OpenAPI document). With METRICS_TOKEN set, only `Authorization: Bearer <token>` reads it.
 */
@ApiExcludeController()
@Controller('metrics')
export class MetricsController {
  private readonly tokenDigest: Buffer | undefined;

  constructor(
    private readonly metrics: MetricsService,
    @Inject(METRICS_TOKEN_SETTINGS.token) token: string | undefined,
  ) {
    this.tokenDigest = token === undefined ? undefined : digest(token);
  }

  @Get()
  async scrape(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    if (!this.authorized(request.headers.authorization)) {
      throw new ApiError(
        ErrorCode.Unauthorized,
        'GET /metrics needs the bearer token set in METRICS_TOKEN.',
        { 'www-authenticate': 'Bearer realm="metrics"' },
      );
    }
    const { contentType, body } = await this.metrics.exposition();
    await reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
  }

  private authorized(header: string | undefined): boolean {
    if (this.tokenDigest === undefined) return true;
    const presented = /^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1];
    // digests of equal length, so the comparison takes the same time whatever was presented
    return presented !== undefined && timingSafeEqual(digest(presented), this.tokenDigest);
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
