import { Module } from '@nestjs/common';
import { ExactSvmSellerScheme } from './exact-svm.scheme.js';
import { SvmReconciler } from './svm-reconciler.js';
import { SvmSettlement } from './svm-settlement.js';

/** `exact` on Solana networks: the scheme, its settlement and its reconciler. */
@Module({ providers: [ExactSvmSellerScheme, SvmSettlement, SvmReconciler] })
export class ExactSvmSchemeModule {}
