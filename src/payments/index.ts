/**
 * The one face of the payments room: what other rooms may import. Everything else under
 * `payments/` is the room's own and may change without notice to them.
 */
export { PaymentsModule } from './payments.module.js';
export { PAYMENT_SETTINGS, type PaymentConfig } from './payments.settings.js';
export { BATCH_SETTLEMENT_SETTINGS } from './schemes/batch-settlement/batch-settlement.settings.js';
export { EXACT_SVM_SETTINGS } from './schemes/exact-svm/exact-svm.settings.js';
export {
  Paid,
  type PaidOptions,
  X402_SECURITY,
  X402_V1_SECURITY,
} from './paywall/paid.decorator.js';
export { METERED_UNIT, PAID_PRICE, type UsdPrice } from './paywall/paid-price.js';
export { Metered, type MeteredOptions } from './paywall/metered.decorator.js';
export { DecodedPaymentGuard } from './paywall/presented-payment.guard.js';
export { MeteredIntake, meteringUnavailable, type MeteredTerms } from './paywall/metered-intake.js';
export type {
  MeteredAccount,
  MeteredCharge,
  MeteredSale,
  MeteringScheme,
  UnitCharge,
} from './paywall/metered-sale.js';
export { PaidRouteExplorer, type PaidRoute } from './paywall/paid-routes.js';
export { REQUESTED_EXTENSIONS, type RequestedExtension } from './paywall/requested-extensions.js';
export { networkStates } from './networks/network-state.dto.js';
export {
  NETWORK_PROBE_INTERVAL_MS,
  NetworkStates,
  type NetworkState,
} from './networks/network-states.js';
export { X402Paywall } from './paywall/x402-paywall.js';
export { installPaywall } from './paywall/install-paywall.js';
export { PaymentIntake } from './paywall/payment-intake.js';
// the scheme seam: what a scheme outside this room implements and uses
export {
  SellerScheme,
  type AbandonReason,
  type IdentifiedSale,
  type OpenSale,
  type PresentedPayment,
  type SaleContext,
  type SaleOutcome,
  type SellerSchemePlugin,
} from './paywall/seller-scheme.js';
export { PaymentVerification } from './paywall/payment-verification.js';
export type { VerifiedPayment } from './paywall/x402-paywall.js';
export { MalformedPaymentError, type ProtocolVersion } from './paywall/x402-wire.js';
export { PaymentRefusedError } from './paywall/offered-requirement.js';
export type { RequestWithPayment, PaidCall } from './paywall/payment-errors.js';
export { PaidCalls, type EnteredCall } from './paywall/paid-calls.js';
export {
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_RESPONSE_HEADER,
  PAYMENT_SIGNATURE_HEADER,
  presentedPaymentHeader,
} from './paywall/x402-wire.js';
export { addAnswerHeaders, answerHeadersOf } from './paywall/answer-headers.js';
