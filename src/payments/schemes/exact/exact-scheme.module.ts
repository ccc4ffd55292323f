import { Module } from '@nestjs/common';
import {
  RpcSettlementChain,
  SETTLEMENT_CHAINS,
  SettlementChains,
} from '../../../chain/settlement-chain.js';
import { REDIS_CLIENT, type RedisClient } from '../../../shared-state/redis-connection.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../../payments.settings.js';
import {
  EXACT_EMBEDDED_FACILITATOR,
  exactEmbeddedFacilitator,
} from './exact-facilitator-scheme.js';
import { ExactSettlement } from './exact-settlement.js';
import { ExactScheme } from './exact.scheme.js';
import { PaymentSettler } from './payment-settler.js';
import {
  LocalReconcileClaims,
  RECONCILE_CLAIMS,
  RedisReconcileClaims,
} from './reconcile-claims.js';
import { SettlementReconciler } from './settlement-reconciler.js';
import { SoldAnswers } from './sold-answers.js';

/**
 * `exact` on EVM networks: the scheme, its settlement and proofs, its reconciler, and its side of
 * the embedded facilitator.
 */
@Module({
  providers: [
    { provide: EXACT_EMBEDDED_FACILITATOR, useValue: exactEmbeddedFacilitator },
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
    ExactScheme,
    PaymentSettler,
    ExactSettlement,
    SettlementReconciler,
    SoldAnswers,
  ],
})
export class ExactSchemeModule {}
