import { ApiProperty } from '@nestjs/swagger';
import { NetworkStateDto } from '../common/payment-networks.js';
import { STREAM_STATES, type StreamState } from '../markets/venue-stream.js';
import {
  SOURCE_ERROR_KINDS,
  TRANSPORTS,
  VENUE_STATUSES,
  type SourceErrorKind,
  type Transport,
  type VenueStatus,
} from './venue-poller.js';

/* The one shape of GET /v1/sources: describeSources() builds these, the OpenAPI documents them. */

export class SourceErrorDto {
  @ApiProperty({
    description: 'What went wrong.',
    enum: SOURCE_ERROR_KINDS,
    example: 'rate_limited',
  })
  kind!: SourceErrorKind;

  @ApiProperty({ example: 'HTTP 429' })
  message!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-20T11:59:58.120Z' })
  at!: string;
}

export class StreamErrorDto {
  @ApiProperty({ example: 'no readable message for 10000 ms' })
  message!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-20T11:59:58.120Z' })
  at!: string;
}

export class StreamDto {
  @ApiProperty({
    enum: STREAM_STATES,
    description:
      '`idle`: not started (waits for a first REST snapshot); `live`: data within the quiet limit; ' +
      '`quiet`: silent too long, being reconnected; `down`: closed, reconnecting with back-off.',
    example: 'live',
  })
  state!: StreamState;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Connections opened so far.',
    example: 1,
  })
  connections!: number;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    example: '2026-11-20T11:59:59.950Z',
  })
  lastMessageAt!: string | null;

  @ApiProperty({ type: StreamErrorDto, nullable: true })
  lastError!: StreamErrorDto | null;
}

export class SourceDto {
  @ApiProperty({ example: 'kraken' })
  id!: string;

  @ApiProperty({
    enum: VENUE_STATUSES,
    description:
      '`waiting`: not asked yet; `failing`/`rate_limited`: the last attempt failed (see lastError).',
    example: 'ok',
  })
  status!: VenueStatus;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    example: '2026-11-20T11:59:59.800Z',
  })
  lastAttemptAt!: string | null;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    example: '2026-11-20T11:59:59.950Z',
  })
  lastSuccessAt!: string | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Duration of the last attempt.',
    example: 150,
  })
  latencyMs!: number | null;

  @ApiProperty({ type: 'integer', minimum: 0, example: 0 })
  consecutiveFailures!: number;

  @ApiProperty({ type: SourceErrorDto, nullable: true })
  lastError!: SourceErrorDto | null;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      'Earliest next request (pacing and backoff); null while its first request has not been made.',
  })
  nextPollAt!: string | null;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Instruments in its last good snapshot.',
    example: 63,
  })
  instruments!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Quotes left out because their stablecoin (USDT/USDC) had no USD rate.',
    example: 0,
  })
  unconverted!: number;

  @ApiProperty({
    type: [String],
    description: 'Served symbols whose price it helped make.',
    example: ['BTC', 'ETH'],
  })
  contributedTo!: string[];

  @ApiProperty({
    type: [String],
    description: 'Served symbols for which it was dropped as an outlier.',
    example: [],
  })
  rejectedFor!: string[];

  @ApiProperty({
    enum: TRANSPORTS,
    description:
      '`stream` while its WebSocket ticker stream is live (REST polling paused); `rest` otherwise.',
    example: 'stream',
  })
  transport!: Transport;

  @ApiProperty({
    type: StreamDto,
    nullable: true,
    description: 'Its ticker stream; null for a venue without one or with streams off.',
  })
  stream!: StreamDto | null;
}

export class StablecoinRatesDto {
  @ApiProperty({
    type: 'number',
    nullable: true,
    description: 'USD per USDT from USD venues.',
    example: 1.0003,
  })
  USDT!: number | null;

  @ApiProperty({
    type: 'number',
    nullable: true,
    description: 'USD per USDC from USD venues.',
    example: 0.9999,
  })
  USDC!: number | null;
}

export class PollerDto {
  @ApiProperty({
    type: 'string',
    nullable: true,
    description:
      'The instance that polls the venues and made this report (host:pid, and the id of its ' +
      'polling lease when several instances share REDIS_URL); null while no instance has ' +
      'published a report yet (every source then `waiting`).',
    example: 'api-1:1:6f1c2d3e-8a4b-4c5d-9e6f-7a8b9c0d1e2f',
  })
  instance!: string | null;

  @ApiProperty({
    description:
      'Whether the instance that answered is that one; with several instances sharing REDIS_URL ' +
      'the others serve the report it publishes to Redis.',
    example: true,
  })
  thisInstance!: boolean;
}

export class PaymentNetworksDto {
  @ApiProperty({ type: [NetworkStateDto], description: 'Each network of X402_NETWORKS.' })
  networks!: NetworkStateDto[];
}

export class SourcesDto {
  @ApiProperty({
    format: 'date-time',
    description: "When this report was made: the moment the venues' states were read.",
  })
  timestamp!: string;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      'When the last aggregation ran; null until a venue has answered (contributedTo, ' +
      'rejectedFor and rates are about that aggregation).',
  })
  aggregatedAt!: string | null;

  @ApiProperty({ type: PollerDto, description: 'Which instance polls the venues.' })
  poller!: PollerDto;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description:
      'Set only on the local test stack (`npm run sandbox`): says its chain, its USDC and (when ' +
      'replayed) its prices are test ones. Null on the service itself.',
    example: null,
  })
  notice!: string | null;

  @ApiProperty({
    type: StablecoinRatesDto,
    description: 'Conversion rates used for USDT/USDC quotes.',
  })
  rates!: StablecoinRatesDto;

  @ApiProperty({
    type: [SourceDto],
    description:
      'Every enabled venue, from start-up on: one never asked yet is `waiting` with no lastError.',
  })
  sources!: SourceDto[];

  @ApiProperty({
    type: PaymentNetworksDto,
    description: "This instance's payment networks: whether each is offered in the 402 now.",
  })
  payments!: PaymentNetworksDto;
}
