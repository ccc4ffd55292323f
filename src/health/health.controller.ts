import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { SNAPSHOT_STORE, type SnapshotStore } from '../aggregation/snapshot-store.js';
import { ApiProblemResponses } from '../common/api-problem-responses.js';
import { ApiError, ErrorCode } from '../common/api-error.js';

export class HealthDto {
  @ApiProperty({ enum: ['ok'], example: 'ok' })
  status!: 'ok';
}

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(@Inject(SNAPSHOT_STORE) private readonly store: SnapshotStore) {}

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
    summary: 'A price snapshot has been aggregated (free)',
    description:
      'For readiness probes: 200 once a refresh round has priced at least one asset, 503 before.',
  })
  @ApiOkResponse({ type: HealthDto, description: 'Ready to serve prices.' })
  @ApiProblemResponses({
    503: { description: 'No snapshot has any price yet.', codes: [ErrorCode.PriceUnavailable] },
  })
  async ready(): Promise<HealthDto> {
    const snapshot = await this.store.current();
    if (snapshot === undefined || snapshot.prices.size === 0) {
      throw new ApiError(ErrorCode.PriceUnavailable, 'No prices have been aggregated yet.', {
        'retry-after': '1',
      });
    }
    return { status: 'ok' };
  }
}
