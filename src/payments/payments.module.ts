import { Global, Module } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { REDIS_CLIENT, closeRedis, type RedisClient } from '../shared-state/redis-connection.js';
import { embeddedSchemesIn } from './facilitator/embedded-schemes.js';
import {
  FACILITATORS,
  type NetworkFacilitators,
  createFacilitators,
} from './facilitator/network-facilitators.js';
import { SettlerLease } from './facilitator/settler-lease.js';
import { InMemoryPaymentLedger, PAYMENT_LEDGER } from './ledger/payment-ledger.js';
import { RedisPaymentLedger } from './ledger/redis-payment-ledger.js';
import { NetworkStates } from './networks/network-states.js';
import { paymentNetworksProvider } from './networks/network-state.dto.js';
import { PAYMENT_NETWORKS } from '../common/payment-networks.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from './payments.settings.js';
import { PaidCalls } from './paywall/paid-calls.js';
import { MeteredIntake } from './paywall/metered-intake.js';
import { PaidRouteExplorer } from './paywall/paid-routes.js';
import { PaymentGuard } from './paywall/payment.guard.js';
import { PaymentIdentifiers } from './paywall/payment-identifiers.js';
import { PaymentIntake } from './paywall/payment-intake.js';
import { PaymentVerification } from './paywall/payment-verification.js';
import { SchemeRegistry } from './paywall/scheme-registry.js';
import { SettlementInterceptor } from './paywall/settlement.interceptor.js';
import { X402Paywall } from './paywall/x402-paywall.js';
import { BatchSettlementSchemeModule } from './schemes/batch-settlement/batch-settlement-scheme.module.js';
import { ExactSchemeModule } from './schemes/exact/exact-scheme.module.js';
import { ExactSvmSchemeModule } from './schemes/exact-svm/exact-svm-scheme.module.js';

/** x402 for every module: any controller method marked `@Paid(price)` is sold per request. */
@Global()
@Module({
  // the schemes: one module each (see paywall/seller-scheme.ts); X402_SCHEMES picks among them
  imports: [DiscoveryModule, ExactSchemeModule, ExactSvmSchemeModule, BatchSettlementSchemeModule],
  providers: [
    {
      // the embedded facilitator settles what the scheme modules contribute
      provide: FACILITATORS,
      inject: [PAYMENT_SETTINGS.token, DiscoveryService],
      useFactory: (payments: PaymentConfig, discovery: DiscoveryService) =>
        createFacilitators(payments, embeddedSchemesIn(discovery)),
    },
    {
      // shared by every instance through Redis when REDIS_URL is set, else this process's own
      provide: PAYMENT_LEDGER,
      inject: [REDIS_CLIENT],
      useFactory: (redis: RedisClient | null) =>
        redis === null ? new InMemoryPaymentLedger() : new RedisPaymentLedger(redis),
    },
    {
      // with shared state, one live instance per settlement key (see SettlerLease)
      provide: SettlerLease,
      inject: [PAYMENT_SETTINGS.token, REDIS_CLIENT, FACILITATORS],
      useFactory: async (
        payments: PaymentConfig,
        redis: RedisClient | null,
        facilitators: NetworkFacilitators,
      ) => {
        if (redis === null || payments.facilitator.mode !== 'embedded') return null;
        try {
          return await SettlerLease.acquire(redis, payments.facilitator.settlerPrivateKey, () => {
            facilitators.forgetSettlerNonces();
          });
        } catch (error) {
          // start-up stops here, before any shutdown hook could close the connection
          await closeRedis(redis);
          throw error;
        }
      },
    },
    PaidRouteExplorer,
    SchemeRegistry,
    NetworkStates,
    paymentNetworksProvider,
    X402Paywall,
    PaymentVerification,
    PaymentIdentifiers,
    PaymentIntake,
    MeteredIntake,
    PaidCalls,
    PaymentGuard,
    SettlementInterceptor,
  ],
  exports: [
    X402Paywall,
    PaidRouteExplorer,
    NetworkStates,
    PAYMENT_NETWORKS,
    SchemeRegistry,
    PAYMENT_LEDGER,
    PaymentGuard,
    PaymentVerification,
    PaymentIdentifiers,
    PaymentIntake,
    MeteredIntake,
    SettlementInterceptor,
    PaidCalls,
    FACILITATORS,
  ],
})
export class PaymentsModule {}
