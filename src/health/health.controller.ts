import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { ApiProblemResponses } from '../common/api-problem-responses.js';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { SkipRateLimit } from '../rate-limit/skip-rate-limit.decorator.js';
import { NetworkStateDto } from '../common/payment-networks.js';
import { networkStates, NetworkStates } from '../payments/index.js';
import { READINESS_CHECKS, type ReadinessCheck } from './readiness.js';

export class HealthDto {
  @ApiProperty({ enum: ['ok'], example: 'ok' })
  status!: 'ok';
}

export class ReadinessDto extends HealthDto {
  @ApiProperty({ type: [NetworkStateDto], description: 'Each network of X402_NETWORKS.' })
  networks!: NetworkStateDto[];
}

@ApiTags('health')
@SkipRateLimit()
@Controller('health')
export class HealthController {
  constructor(
    @Inject(READINESS_CHECKS) private readonly checks: readonly ReadinessCheck[],
    private readonly networks: NetworkStates,
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
    summary: 'Everything a paid request needs is there (free)',
    description:
      'For readiness probes: 200 when a paid request can be served: a snapshot has at least one ' +
      'price, the payment facilitator has confirmed the paid routes, the chain RPC of at least ' +
      'one network answers (where one is configured: embedded mode, or receipt proofs) and the ' +
      'service is not stopping; the body lists each network and whether it is offered. ' +
      'Otherwise 503 naming every check that failed and why.',
  })
  @ApiOkResponse({ type: ReadinessDto, description: 'Ready to sell prices.' })
  @ApiProblemResponses({
    503: {
      description:
        "Not ready; `detail` names each failing check. The code is the first failure's: no price " +
        'yet (`price_unavailable`), facilitator not confirmed (`facilitator_unavailable`), chain ' +
        'RPC not answering (`chain_unavailable`), Redis (REDIS_URL) not reachable ' +
        '(`shared_state_unavailable`), stopping after SIGTERM (`shutting_down`).',
      codes: [
        ErrorCode.PriceUnavailable,
        ErrorCode.FacilitatorUnavailable,
        ErrorCode.ChainUnavailable,
        ErrorCode.SharedStateUnavailable,
        ErrorCode.ShuttingDown,
      ],
    },
  })
  async ready(): Promise<ReadinessDto> {
    const results = await Promise.all(
      this.checks.map(async (check) => ({ name: check.name, result: await check.check() })),
    );
    const failed = results.flatMap(({ name, result }) => (result.ok ? [] : [{ name, ...result }]));
    const first = failed[0];
    if (first === undefined) {
      return { status: 'ok', networks: await networkStates(this.networks) };
    }
    throw new ApiError(
      first.code,
      `Not ready: ${failed.map(({ name, reason }) => `${name}: ${reason}`).join('; ')}.`,
      { 'retry-after': String(first.retryAfterSeconds) },
    );
  }
}
