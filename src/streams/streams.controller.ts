import {
  Controller,
  Get,
  Headers,
  HttpCode,
  Inject,
  Param,
  Post,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import {
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProperty,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PriceChanges, type PriceChange } from '../aggregation/price-changes.js';
import { PriceAttestor } from '../attestation/index.js';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { ApiProblemResponses } from '../common/api-problem-responses.js';
import { SYMBOL_MAX_LENGTH } from '../common/symbol-format.js';
import { Resolved } from '../paid-answers/index.js';
import {
  DecodedPaymentGuard,
  Metered,
  MeteredIntake,
  meteringUnavailable,
  type MeteredSale,
} from '../payments/index.js';
import { RateLimiter } from '../rate-limit/rate-limit.guard.js';
import { LimitedAsPaid } from '../rate-limit/skip-rate-limit.decorator.js';
import { changeOfKept, PriceStream, type Resend, type StreamRequest } from './price-stream.js';
import { StreamRegistry } from './stream-registry.js';
import { MAX_STREAM_SYMBOLS, StreamRequestResolver } from './stream-request.resolver.js';
import { STREAMS_SETTINGS, type StreamsSettings } from './streams.settings.js';

const UPDATE_PRICE = '$0.0001';

class TopUpDto {
  @ApiProperty({ description: 'The stream the voucher raised the budget of.' })
  streamId!: string;

  @ApiProperty({ description: 'What the channel has been charged, cumulative, atomic units.' })
  charged!: string;

  @ApiProperty({ description: 'What the channel’s vouchers now cover, cumulative, atomic units.' })
  covered!: string;
}

@ApiTags('streams')
@Controller('v1')
export class StreamsController {
  constructor(
    private readonly intake: MeteredIntake,
    private readonly registry: StreamRegistry,
    private readonly changes: PriceChanges,
    private readonly attestor: PriceAttestor,
    private readonly limiter: RateLimiter,
    @Inject(STREAMS_SETTINGS.token) private readonly settings: StreamsSettings,
  ) {}

  @Get('stream/:symbols')
  @Metered({
    price: UPDATE_PRICE,
    unit: 'update',
    description:
      'Server-Sent Events: `open`, then one `price` event per change of a symbol’s price (its ' +
      '`id` the channel’s charged total after it), `payment-required` when the budget is used ' +
      'up, `end` before the service closes the stream; `: keep-alive` comments in between.',
    resolver: StreamRequestResolver,
  })
  @ApiOperation({
    operationId: 'streamPrices',
    summary: `Live USD prices of 1 to ${MAX_STREAM_SYMBOLS} assets, pushed as they change`,
    description:
      'Every change of each symbol’s aggregated price, as Server-Sent Events, charged per update ' +
      'written to the connection and never more than the budget the buyer’s batch-settlement ' +
      'voucher covers (docs/streams.md). Symbols and options are checked before any payment is asked for.',
  })
  @ApiParam({
    name: 'symbols',
    description: `1 to ${MAX_STREAM_SYMBOLS} distinct symbols, comma-separated, case-insensitive.`,
    examples: { two: { value: 'BTC,ETH' } },
    schema: {
      type: 'string',
      minLength: 1,
      maxLength: (SYMBOL_MAX_LENGTH + 1) * MAX_STREAM_SYMBOLS,
    },
  })
  @ApiQuery({
    name: 'minMoveBps',
    required: false,
    description: 'Send a symbol’s update only when it moved this much since the last one sent.',
    schema: { type: 'number', minimum: 0, maximum: 10000, default: 0 },
  })
  @ApiQuery({
    name: 'maxHz',
    required: false,
    description: 'At most this many updates per symbol per second; in between, the newest wins.',
    schema: { type: 'number', minimum: 0.1, maximum: 10, default: 1 },
  })
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description:
      'A reconnect: the id of the last `price` event received. An update charged after it is re-sent free.',
  })
  @ApiProblemResponses({
    400: {
      description:
        'A symbol or option is malformed, or the payment header is (`invalid_payment`). Not charged.',
      codes: [
        ErrorCode.InvalidSymbolList,
        ErrorCode.InvalidSymbol,
        ErrorCode.BadRequest,
        ErrorCode.InvalidPayment,
      ],
    },
    404: {
      description: 'A symbol is not supported. Not charged.',
      codes: [ErrorCode.UnknownSymbol],
    },
    429: {
      description: 'The payer or the client address has its most streams open. Not charged.',
      codes: [ErrorCode.StreamLimit],
    },
    503: {
      description:
        'No fresh price for a symbol now, streams are not sold here (no batch-settlement), this ' +
        'instance serves its most streams, or the payment state cannot be reached. Not charged.',
      codes: [
        ErrorCode.PriceUnavailable,
        ErrorCode.StreamsUnavailable,
        ErrorCode.StreamCapacity,
        ErrorCode.FacilitatorUnavailable,
        ErrorCode.SharedStateUnavailable,
      ],
    },
  })
  async stream(
    @Resolved() asked: StreamRequest,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    if (!this.intake.available()) throw meteringUnavailable();
    const slot = this.registry.reserve(request.ip);
    let stream: PriceStream;
    let sale: MeteredSale | undefined;
    try {
      sale = await this.intake.open(request, reply, {
        maxBudget: this.settings.maxBudget,
        admit: (payer) => {
          slot.admit(payer);
        },
      });
      stream = new PriceStream(
        sale,
        asked,
        reply.raw,
        {
          changes: this.changes,
          settings: this.settings,
          attest: (change) => this.attest(change),
        },
        await resendOf(sale, asked.symbols, request.headers['last-event-id']),
      );
    } catch (error) {
      // a sale opened before the failure stops its background chain checks too
      sale?.end();
      slot.release();
      throw error;
    }
    slot.bind(stream);
    // a stream opened on a verified voucher buys: its count on arrival is given back
    await this.limiter.meteredPaymentTaken(request);
    reply.hijack();
    void stream.run().finally(() => {
      slot.release();
    });
  }

  @Post('stream/:streamId/payment')
  @HttpCode(200)
  // junk in the header is a 400 before the stream is looked up; what raises nothing counts as a
  // paid route's request that bought nothing
  @UseGuards(DecodedPaymentGuard)
  @LimitedAsPaid()
  @ApiOperation({
    operationId: 'topUpStream',
    summary: 'Raise an open stream’s budget (free: the money is in the voucher)',
    description:
      'A voucher on the stream’s channel signing its charged total plus a new budget, in ' +
      '`PAYMENT-SIGNATURE`; the stream waiting after `payment-required` goes on.',
  })
  @ApiParam({ name: 'streamId', description: 'The `streamId` of the stream’s `open` event.' })
  @ApiOkResponse({ type: TopUpDto, description: 'The stream’s new budget.' })
  @ApiResponse({
    status: 402,
    description:
      'The voucher is refused: another channel, a wrong signer, not the charged total plus a ' +
      'budget, over the balance; the reason is in `error` (body and `PAYMENT-REQUIRED`). Nothing ' +
      'raised, nothing charged.',
  })
  @ApiProblemResponses({
    400: {
      description: 'The payment header is missing or malformed.',
      codes: [ErrorCode.InvalidPayment],
    },
    404: { description: 'No such stream open on this instance.', codes: [ErrorCode.UnknownStream] },
  })
  async topUp(
    @Param('streamId') streamId: string,
    @Headers('payment-signature') header: string | undefined,
    @Req() request: FastifyRequest,
  ): Promise<TopUpDto> {
    const stream = this.registry.get(streamId);
    if (stream === undefined) {
      throw new ApiError(
        ErrorCode.UnknownStream,
        `No stream ${streamId.slice(0, 64)} is open on this instance.`,
      );
    }
    if (header === undefined || header === '') {
      throw new ApiError(
        ErrorCode.InvalidPayment,
        'A top-up carries a voucher in PAYMENT-SIGNATURE.',
      );
    }
    const raised = await stream.topUp(header);
    // a top-up taken bought the budget: its count on arrival is given back
    await this.limiter.meteredPaymentTaken(request);
    return raised;
  }

  /** The attestation the one-symbol ticker answer of this price would carry. */
  private async attest(change: PriceChange): Promise<string | undefined> {
    return this.attestor.headerFor({
      attestedClaims: () => ({
        currency: 'USD',
        // as a ticker answer's: the oldest input behind the price
        timestamp: change.oldestInputAt,
        values: [
          {
            symbol: change.symbol,
            value: change.price,
            venues: change.venues,
            spread: change.spread ?? 0,
          },
        ],
      }),
      // one change reaches every stream of its symbol as the same object: signed once for all
      claimsKey: { source: change, key: change.symbol },
    });
  }
}

/**
 * The charge a reconnect re-sends free: the channel's last stream charge, if after what it saw
 * (Last-Event-ID), on one of its symbols and not re-sent before; exactly the update it paid for.
 */
async function resendOf(
  sale: MeteredSale,
  symbols: readonly string[],
  header: string | string[] | undefined,
): Promise<Resend | undefined> {
  const seen = (Array.isArray(header) ? header[0] : header)?.trim();
  if (seen === undefined || !/^\d{1,40}$/.test(seen)) return undefined;
  const kept = await sale.resend(BigInt(seen), symbols);
  const change = kept === undefined ? undefined : changeOfKept(kept.content);
  return kept === undefined || change === undefined ? undefined : { id: kept.cumulative, change };
}
