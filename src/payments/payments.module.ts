import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { FACILITATOR_CLIENT, createFacilitatorClient } from './facilitator-client.js';
import { PaidRouteExplorer } from './paid-routes.js';
import { InMemoryPaymentLedger, PAYMENT_LEDGER } from './payment-ledger.js';
import { PaymentSettler } from './payment-settler.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from './payments.settings.js';
import { PaymentGuard } from './payment.guard.js';
import { RpcSettlementChain, SETTLEMENT_CHAIN } from './settlement-chain.js';
import { SettlementReconciler } from './settlement-reconciler.js';
import { SettlementInterceptor } from './settlement.interceptor.js';
import { X402Paywall } from './x402-paywall.js';

/** x402 for every module: any controller method marked `@Paid(price)` is sold per request. */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: FACILITATOR_CLIENT,
      inject: [PAYMENT_SETTINGS.token],
      useFactory: (payments: PaymentConfig) => createFacilitatorClient(payments),
    },
    { provide: PAYMENT_LEDGER, useFactory: () => new InMemoryPaymentLedger() },
    {
      provide: SETTLEMENT_CHAIN,
      inject: [PAYMENT_SETTINGS.token],
      useFactory: (payments: PaymentConfig) =>
        payments.rpcUrl === undefined ? null : new RpcSettlementChain(payments.rpcUrl),
    },
    PaidRouteExplorer,
    X402Paywall,
    PaymentSettler,
    SettlementReconciler,
    PaymentGuard,
    SettlementInterceptor,
  ],
  exports: [
    X402Paywall,
    PAYMENT_LEDGER,
    PaymentGuard,
    SettlementInterceptor,
    PaymentSettler,
    SettlementReconciler,
  ],
})
export class PaymentsModule {}
