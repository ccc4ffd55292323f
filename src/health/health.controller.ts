import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { SNAPSHOT_STORE, type SnapshotStore } from '../aggregation/snapshot-store.js';
import { ApiProblemResponses } from '../common/api-problem-responses.js';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { REDIS_CLIENT, type RedisClient } from '../shared-state/redis-connection.js';
import { X402Paywall } from '../payments/x402-paywall.js';

export class HealthDto {
  @ApiProperty({ enum: ['ok'], example: 'ok' })
  status!: 'ok';
}

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    @Inject(SNAPSHOT_STORE) private readonly store: SnapshotStore,
    private readonly paywall: X402Paywall,
    @Inject(REDIS_CLIENT) private readonly redis: RedisClient | null,
  ) {}

  @Get('live')
  @ApiOperation({
    operationId: 'getLiveness',
    summary: 'The process is up (free)',
    description: 'Always 200 while the process serves HTTP; for liveness probes.',
  })
  @ApiOkResponse({ type: HealthDto, description: 'Alive.' })
  live(): HealthDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({
    operationId: 'getReadiness',
    summary: 'Prices are aggregated and the facilitator is ready (free)',
    description:
      'For readiness probes: 200 once a refresh round has priced at least one asset and the payment ' +
      'facilitator has confirmed the paid routes, 503 before.',
  })
  @ApiOkResponse({ type: HealthDto, description: 'Ready to sell prices.' })
  @ApiProblemResponses({
    503: {
      description:
        'No snapshot has any price yet (`price_unavailable`), the payment facilitator has not ' +
        'confirmed the paid routes yet (`facilitator_unavailable`), or the shared state (Redis, ' +
        'REDIS_URL) cannot be reached (`shared_state_unavailable`).',
      codes: [
        ErrorCode.PriceUnavailable,
        ErrorCode.FacilitatorUnavailable,
        ErrorCode.SharedStateUnavailable,
      ],
    },
  })
  async ready(): Promise<HealthDto> {
    if (this.redis !== null && !this.redis.isReady) {
      throw new ApiError(
        ErrorCode.SharedStateUnavailable,
        'Redis (REDIS_URL) cannot be reached: paid routes answer 503 until it is back; free routes work.',
        { 'retry-after': '2' },
      );
    }
    if (!this.paywall.ready) {
      throw new ApiError(
        ErrorCode.FacilitatorUnavailable,
        'The payment facilitator has not confirmed the paid routes yet.',
        { 'retry-after': String(this.paywall.retryAfterSeconds()) },
      );
    }
    const snapshot = await this.store.current();
    if (snapshot === undefined || snapshot.prices.size === 0) {
      throw new ApiError(ErrorCode.PriceUnavailable, 'No prices have been aggregated yet.', {
        'retry-after': '1',
      });
    }
    return { status: 'ok' };
  }
}
