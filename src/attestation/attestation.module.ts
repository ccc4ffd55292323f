import { PAYMENT_SETTINGS, type PaymentConfig, REQUESTED_EXTENSIONS } from '../payments/index.js';
import { Global, Logger, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { generatePrivateKey } from 'viem/accounts';
import { ATTESTATION_SIGNER, AttestationSigner } from './attestation-signer.js';
import { AttestationController } from './attestation.controller.js';
import { ATTESTATION_SETTINGS, type AttestationConfig } from './attestation.settings.js';
import { AttestedRoutes } from './attested-routes.js';
import { PriceAttestor } from './price-attestor.js';
import { receiptExtension } from './receipt-extension.js';

/**
 * Signed answers: every `@Attested()` route's 200 carries a Price-Attestation header, buyers
 * may ask for signed x402 receipts, and GET /.well-known/price-attestation says how to verify
 * both. Global so the payments module finds the receipt extension and every feature module's
 * `@Attested()` routes find their interceptor's signer.
 */
@Global()
@Module({
  imports: [DiscoveryModule],
  controllers: [AttestationController],
  providers: [
    {
      provide: ATTESTATION_SIGNER,
      inject: [ATTESTATION_SETTINGS.token],
      useFactory: (config: AttestationConfig): AttestationSigner | null => {
        if (!config.enabled) return null;
        if (config.privateKey !== undefined) return new AttestationSigner(config.privateKey);
        const signer = new AttestationSigner(generatePrivateKey());
        new Logger(AttestationModule.name).warn(
          `ATTESTATION_PRIVATE_KEY is not set: price answers are signed by ${signer.address}, a ` +
            'key made for this process only; set ATTESTATION_PRIVATE_KEY so every instance, ' +
            'and every restart, signs with the same one',
        );
        return signer;
      },
    },
    {
      provide: REQUESTED_EXTENSIONS,
      inject: [ATTESTATION_SIGNER, PAYMENT_SETTINGS.token],
      useFactory: (signer: AttestationSigner | null, payments: PaymentConfig) =>
        signer === null ? [] : [receiptExtension(signer, payments.publicUrl)],
    },
    PriceAttestor,
    AttestedRoutes,
  ],
  exports: [REQUESTED_EXTENSIONS, ATTESTATION_SIGNER, PriceAttestor],
})
export class AttestationModule {}
