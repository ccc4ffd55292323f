import { Injectable, Logger } from '@nestjs/common';
import type { PaymentPayload } from '@x402/core/types';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../../common/api-error.js';
import { PreparedResponseException } from '../../common/prepared-response.exception.js';
import { PaymentRefusedError, offeredRequirement } from './offered-requirement.js';
import { answerHeadersOf } from './answer-headers.js';
import {
  asPaymentError,
  challengeResponse,
  settlementUnknown,
  type RequestWithPayment,
} from './payment-errors.js';
import { AnswerAlreadySold, PaymentIdentifiers, paymentIdOf } from './payment-identifiers.js';
import { PaymentVerification } from './payment-verification.js';
import { clientGone, saleContextOf } from './sale-context.js';
import { SchemeRegistry } from './scheme-registry.js';
import type { OpenSale, SaleOutcome } from './seller-scheme.js';
import { X402Paywall } from './x402-paywall.js';
import { receiptHeader, receiptHeaders, type ProtocolVersion } from './x402-wire.js';

/**
 * The HTTP side of a sale, the same for every transport that carries one (the HTTP guard and
 * interceptor, an MCP tool call): the only place where what a scheme says becomes a response.
 *
 * Opening: a presented payment (already decoded into its v2 form) has its `accepted` matched
 * field by field to one of the offers (none → 402 with the reason) and goes to that offer's
 * scheme, which accepts it only in exactly the offered shape, claims it and has it verified.
 * Refusals are 402s with the reason; a malformed payment is a 400; a payment-identifier retry
 * of a sold answer gets that answer again.
 *
 * Closing: the scheme settles and says how it went; settled → the receipt headers (and the
 * answer kept under its payment-identifier), refused → 402 with the reason, nothing charged,
 * used (the payment had paid for an earlier request) → 402 naming that, nothing sold,
 * unknown → 502 `settlement_unknown` naming the transaction.
 */
@Injectable()
export class PaymentIntake {
  private readonly logger = new Logger(PaymentIntake.name);

  constructor(
    private readonly paywall: X402Paywall,
    private readonly schemes: SchemeRegistry,
    private readonly verification: PaymentVerification,
    private readonly identifiers: PaymentIdentifiers,
  ) {}

  /** `decode`: the payment header in v2 form, given what the route offers (v1 pairs with one). */
  async open(
    request: FastifyRequest,
    reply: FastifyReply,
    version: ProtocolVersion,
    decode: (offered: Awaited<ReturnType<X402Paywall['requirementsFor']>>) => PaymentPayload,
  ): Promise<OpenSale> {
    // nobody would receive what a payment checked now buys: no verification is spent on it
    if (clientGone(reply)) {
      throw new ApiError(
        ErrorCode.ClientClosedRequest,
        'The client closed the connection before its payment was checked; nothing was charged.',
      );
    }
    try {
      const offered = await this.paywall.requirementsFor(request);
      const payload = decode(offered);
      const requirement = offeredRequirement(payload, offered);
      const scheme = this.schemes.named(requirement.scheme, requirement.network);
      // v1 clients are offered, and may pay with, only the schemes their 402 body lists
      if (scheme === undefined || (version === 1 && !scheme.offeredToV1)) {
        throw new PaymentRefusedError(`unsupported_scheme: ${requirement.scheme}`);
      }
      return await scheme.open({ payload, version, requirement }, saleContextOf(request, reply));
    } catch (error) {
      if (error instanceof PaymentRefusedError) {
        return this.verification.refuse(request, error);
      }
      if (error instanceof AnswerAlreadySold) {
        const { status, body, headers } = error.response;
        throw new PreparedResponseException(status, body, headers);
      }
      throw asPaymentError(error, this.logger);
    }
  }

  /**
   * A payment-identifier retry of an answer already sold, answered before anything else of the
   * route runs (its resolver too, which may refuse what was bought while the data is stale): the
   * stored answer is thrown as the response. Anything else returns, to be answered the ordinary
   * way and in the ordinary order: no id or nothing stored under it (read without binding it),
   * or a payment that is not that retry (409, 402, ... come after the resolver as always).
   */
  async answerStored(
    request: FastifyRequest,
    reply: FastifyReply,
    payload: PaymentPayload,
  ): Promise<void> {
    let sale: OpenSale;
    try {
      const paymentId = paymentIdOf(payload);
      if (paymentId === undefined || !(await this.identifiers.hasStoredAnswer(paymentId))) return;
      const offered = await this.paywall.requirementsFor(request);
      const requirement = offeredRequirement(payload, offered);
      const scheme = this.schemes.named(requirement.scheme, requirement.network);
      if (scheme === undefined) return;
      // the scheme binds the id first: a stored answer there is AnswerAlreadySold, before any claim
      sale = await scheme.open({ payload, version: 2, requirement }, saleContextOf(request, reply));
    } catch (error) {
      if (error instanceof AnswerAlreadySold) {
        const { status, body, headers } = error.response;
        throw new PreparedResponseException(status, body, headers);
      }
      return;
    }
    // the stored answer expired since it was read: nothing is sold before the resolver has run
    await sale.abandon('handler_failed');
  }

  /**
   * The handler answered `body`: the sale is closed and the receipt headers to send with the
   * body returned, or what to answer instead is thrown. A buyer already gone (or a paid call
   * cancelled) buys nothing; a paid call whose settlement begins is no longer cancelled.
   */
  async close(
    request: FastifyRequest,
    reply: FastifyReply,
    sale: OpenSale,
    body: unknown,
  ): Promise<Record<string, string>> {
    const call = (request as RequestWithPayment).x402Call;
    if (clientGone(reply) || call?.beginSettlement() === false) {
      await sale.abandon('handler_failed');
      this.logger.warn(
        `${request.method} ${request.url}: client left before settlement; nothing charged`,
      );
      throw new ApiError(
        ErrorCode.ClientClosedRequest,
        'The client closed the connection before settlement; nothing was charged.',
      );
    }
    return this.answer(request, sale, await sale.close(body), body);
  }

  private async answer(
    request: FastifyRequest,
    sale: OpenSale,
    outcome: SaleOutcome,
    body: unknown,
  ): Promise<Record<string, string>> {
    switch (outcome.kind) {
      case 'settled': {
        // the answer's own headers (its attestation) go out, and are kept, with the receipt
        const headers = {
          ...(await answerHeadersOf(request)),
          ...receiptHeaders(sale.version, outcome.receipt),
        };
        if (sale.identified !== undefined) {
          const { paymentId, fingerprint } = sale.identified;
          await this.identifiers.storeAnswer(paymentId, fingerprint, headers, body);
        }
        return headers;
      }
      case 'refused': {
        const challenge = await this.paywall.challenge(
          request,
          `settlement_failed: ${outcome.reason}`,
        );
        if (outcome.receipt === undefined) throw challengeResponse(challenge);
        const [name, value] = receiptHeader(sale.version, outcome.receipt);
        throw challengeResponse({ ...challenge, headers: { ...challenge.headers, [name]: value } });
      }
      case 'used':
        throw challengeResponse(await this.paywall.challenge(request, outcome.reason));
      case 'unknown':
        throw outcome.message === undefined
          ? settlementUnknown(outcome.transaction, outcome.reason)
          : new ApiError(ErrorCode.SettlementUnknown, outcome.message, { 'retry-after': '5' });
    }
  }
}
