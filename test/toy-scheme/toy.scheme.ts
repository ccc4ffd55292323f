import type { FacilitatorClient } from '@x402/core/server';
import type {
  AssetAmount,
  Network,
  PaymentPayload,
  PaymentRequirements,
  SchemeNetworkServer,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from '@x402/core/types';
import { isRecord } from '../../src/common/json.js';
import { Inject } from '@nestjs/common';
import {
  MalformedPaymentError,
  PAYMENT_SETTINGS,
  PaymentVerification,
  SellerScheme,
  X402Paywall,
  type IdentifiedSale,
  type OpenSale,
  type PaymentConfig,
  type PresentedPayment,
  type ProtocolVersion,
  type SaleContext,
  type SaleOutcome,
  type SellerSchemePlugin,
  type VerifiedPayment,
} from '../../src/payments/index.js';

/**
 * A toy scheme, to prove that a scheme is a plug-in: `prepaid-code` sells a route for a code the
 * seller issued beforehand, worth exactly the route's price and good once. It brings its own
 * facilitator (the codes live in this process). Registered by its module (prepaid-code.module.ts)
 * given to the app, and sold through the money-only seam: it never sees a request or a reply.
 */
export const TOY_SCHEME = 'prepaid-code';

/** The codes on issue, each worth an amount in the asset's atomic units, used at most once. */
export class PrepaidCodes implements FacilitatorClient {
  private readonly worth = new Map<string, string>();
  private readonly used = new Set<string>();

  constructor(private readonly network: Network) {}

  issue(code: string, amount: string): void {
    this.worth.set(code, amount);
  }

  /** The code is spent elsewhere (another till, say): any settlement still to come is refused. */
  spend(code: string): void {
    this.used.add(code);
  }

  getSupported(): Promise<SupportedResponse> {
    return Promise.resolve({
      kinds: [{ x402Version: 2, scheme: TOY_SCHEME, network: this.network }],
      extensions: [],
      signers: {},
    });
  }

  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    const reason = this.refusal(codeOf(payload), requirements);
    return Promise.resolve(
      reason === undefined
        ? { isValid: true, payer: `code:${codeOf(payload)}` }
        : { isValid: false, invalidReason: reason },
    );
  }

  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    const code = codeOf(payload);
    const reason = this.refusal(code, requirements);
    if (reason === undefined) this.used.add(code);
    return Promise.resolve({
      success: reason === undefined,
      transaction: reason === undefined ? `prepaid:${code}` : '',
      network: requirements.network,
      payer: `code:${code}`,
      ...(reason === undefined ? {} : { errorReason: reason }),
    });
  }

  private refusal(code: string, requirements: PaymentRequirements): string | undefined {
    if (this.used.has(code)) return 'code_already_used';
    const worth = this.worth.get(code);
    if (worth === undefined) return 'unknown_code';
    return worth === requirements.amount ? undefined : 'code_worth_another_amount';
  }
}

/** Prices an offer in the configured token, as `exact` does. */
class PrepaidCodeServer implements SchemeNetworkServer {
  readonly scheme = TOY_SCHEME;
  readonly defaultAssetTransferMethod = 'code';
  readonly paymentFlows = {
    code: { supported: ['authorization'], default: 'authorization' },
  } as SchemeNetworkServer['paymentFlows'];

  parsePrice(price: unknown): Promise<AssetAmount> {
    return Promise.resolve(price as AssetAmount);
  }

  enhancePaymentRequirements(requirements: PaymentRequirements): Promise<PaymentRequirements> {
    return Promise.resolve(requirements);
  }
}

@SellerScheme()
export class PrepaidCodeScheme implements SellerSchemePlugin {
  readonly scheme = TOY_SCHEME;
  readonly offeredToV1 = false;
  readonly codes: PrepaidCodes;

  constructor(
    private readonly paywall: X402Paywall,
    private readonly verification: PaymentVerification,
    @Inject(PAYMENT_SETTINGS.token) payments: PaymentConfig,
  ) {
    this.codes = new PrepaidCodes(payments.networks[0].network);
  }

  serves(network: string): boolean {
    return network.startsWith('eip155:');
  }

  serverScheme(): SchemeNetworkServer {
    return new PrepaidCodeServer();
  }

  ownFacilitator(): FacilitatorClient {
    return this.codes;
  }

  async open(presented: PresentedPayment, context: SaleContext): Promise<OpenSale> {
    const code = codeOf(presented.payload);
    const payment = await this.verification.verify(context, presented.payload);
    return new PrepaidSale(code, presented.requirement, payment, this.paywall);
  }
}

/** A code verified for one call: spent by its settlement, and nothing else. */
class PrepaidSale implements OpenSale {
  readonly version: ProtocolVersion = 2;
  readonly identified: IdentifiedSale | undefined = undefined;

  constructor(
    private readonly code: string,
    readonly requirement: PaymentRequirements,
    private readonly payment: VerifiedPayment,
    private readonly paywall: X402Paywall,
  ) {}

  get payer(): string {
    return `code:${this.code}`;
  }

  async close(): Promise<SaleOutcome> {
    const settlement = await this.paywall.settle(this.payment);
    return settlement.success
      ? { kind: 'settled', receipt: settlement }
      : { kind: 'refused', reason: settlement.errorReason ?? 'refused' };
  }

  abandon(): Promise<void> {
    return Promise.resolve(); // a code is spent only by a settlement
  }
}

/** `{ code }` and nothing else; a malformed payload is a 400. */
function codeOf(payload: PaymentPayload): string {
  const inner: unknown = payload.payload;
  if (!isRecord(inner) || Object.keys(inner).length !== 1 || typeof inner['code'] !== 'string') {
    throw new MalformedPaymentError('a prepaid-code payload is exactly { code }');
  }
  return inner['code'];
}
