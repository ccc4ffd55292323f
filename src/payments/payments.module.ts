import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { FACILITATORS, createFacilitators } from './facilitator/network-facilitators.js';
import { PaidRouteExplorer } from './paywall/paid-routes.js';
import { InMemoryPaymentLedger, PAYMENT_LEDGER } from './ledger/payment-ledger.js';
import { REDIS_CLIENT, closeRedis, type RedisClient } from '../shared-state/redis-connection.js';
import { RedisPaymentLedger } from './ledger/redis-payment-ledger.js';
import { SettlerLease } from './facilitator/settler-lease.js';
import { PaymentSettler } from './schemes/exact/payment-settler.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from './payments.settings.js';
import { PaymentGuard } from './paywall/payment.guard.js';
import {
  RpcSettlementChain,
  SETTLEMENT_CHAINS,
  SettlementChains,
} from '../chain/settlement-chain.js';
import {
  LocalReconcileClaims,
  RECONCILE_CLAIMS,
  RedisReconcileClaims,
} from './schemes/exact/reconcile-claims.js';
import { SettlementReconciler } from './schemes/exact/settlement-reconciler.js';
import { SoldAnswers } from './schemes/exact/sold-answers.js';
import { SettlementInterceptor } from './paywall/settlement.interceptor.js';
import { X402Paywall } from './paywall/x402-paywall.js';
import { NetworkStates } from './networks/network-states.js';
import { channelStorageProvider } from './channels/channel-storage.js';
import { PaymentIdentifiers } from './paywall/payment-identifiers.js';
import { PaymentIntake } from './paywall/payment-intake.js';
import { PaymentVerification } from './paywall/payment-verification.js';
import { SchemeRegistry } from './paywall/scheme-registry.js';
import { BatchChannels } from './schemes/batch-settlement/batch-channels.js';
import { BatchSettlement } from './schemes/batch-settlement/batch-settlement.js';
import { BatchSettlementScheme } from './schemes/batch-settlement/batch-settlement.scheme.js';
import { LostAnswers } from './schemes/batch-settlement/lost-answers.js';
import { ExactSettlement } from './schemes/exact/exact-settlement.js';
import { ExactScheme } from './schemes/exact/exact.scheme.js';
import { ExactSvmSellerScheme } from './schemes/exact-svm/exact-svm.scheme.js';
import { SvmReconciler } from './schemes/exact-svm/svm-reconciler.js';
import { SvmSettlement } from './schemes/exact-svm/svm-settlement.js';

/** x402 for every module: any controller method marked `@Paid(price)` is sold per request. */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: FACILITATORS,
      inject: [PAYMENT_SETTINGS.token],
      useFactory: (payments: PaymentConfig) => createFacilitators(payments),
    },
    {
      // shared by every instance through Redis when REDIS_URL is set, else this process's own
      provide: PAYMENT_LEDGER,
      inject: [REDIS_CLIENT],
      useFactory: (redis: RedisClient | null) =>
        redis === null ? new InMemoryPaymentLedger() : new RedisPaymentLedger(redis),
    },
    {
      // one instance reconciles each uncertain sale: shared claims with REDIS_URL
      provide: RECONCILE_CLAIMS,
      inject: [REDIS_CLIENT],
      useFactory: (redis: RedisClient | null) =>
        redis === null ? new LocalReconcileClaims() : new RedisReconcileClaims(redis),
    },
    {
      // each network's chain where it has an RPC: proofs and reconciliation
      provide: SETTLEMENT_CHAINS,
      inject: [PAYMENT_SETTINGS.token],
      useFactory: (payments: PaymentConfig) =>
        new SettlementChains(
          new Map(
            payments.networks.flatMap(({ network, rpcUrl }) =>
              rpcUrl === undefined ? [] : [[network, new RpcSettlementChain(rpcUrl)] as const],
            ),
          ),
        ),
    },
    {
      // with shared state, one live instance per settlement key (see SettlerLease)
      provide: SettlerLease,
      inject: [PAYMENT_SETTINGS.token, REDIS_CLIENT],
      useFactory: async (payments: PaymentConfig, redis: RedisClient | null) => {
        if (redis === null || payments.facilitator.mode !== 'embedded') return null;
        try {
          return await SettlerLease.acquire(redis, payments.facilitator.settlerPrivateKey);
        } catch (error) {
          // start-up stops here, before any shutdown hook could close the connection
          await closeRedis(redis);
          throw error;
        }
      },
    },
    channelStorageProvider,
    PaidRouteExplorer,
    SchemeRegistry,
    NetworkStates,
    X402Paywall,
    PaymentVerification,
    PaymentIdentifiers,
    PaymentIntake,
    SoldAnswers,
    PaymentGuard,
    SettlementInterceptor,
    // the schemes: one line each (see paywall/seller-scheme.ts); X402_SCHEMES picks among them
    ExactScheme,
    ExactSvmSellerScheme,
    BatchSettlementScheme,
    // what the schemes use
    PaymentSettler,
    ExactSettlement,
    SettlementReconciler,
    BatchChannels,
    BatchSettlement,
    LostAnswers,
    SvmReconciler,
    SvmSettlement,
  ],
  exports: [
    X402Paywall,
    PaidRouteExplorer,
    NetworkStates,
    SchemeRegistry,
    PAYMENT_LEDGER,
    PaymentGuard,
    PaymentVerification,
    PaymentIdentifiers,
    PaymentIntake,
    SettlementInterceptor,
    SoldAnswers,
  ],
})
export class PaymentsModule {}
