import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { SchemeNetworkServer } from '@x402/core/types';
import { StartupError } from '../../common/startup-error.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../payments.settings.js';
import { SchemeRegistry } from './scheme-registry.js';
import { SellerScheme, type OpenSale, type SellerSchemePlugin } from './seller-scheme.js';

function scheme(name: string, offeredToV1: boolean): new () => SellerSchemePlugin {
  @SellerScheme()
  class Registered implements SellerSchemePlugin {
    readonly scheme = name;
    readonly offeredToV1 = offeredToV1;
    serverScheme(): SchemeNetworkServer {
      throw new Error('not used here');
    }
    open(): Promise<OpenSale> {
      throw new Error('not used here');
    }
  }
  return Registered;
}

/** A provider that is not a scheme: the registry must not pick it up. */
class NotAScheme {
  readonly scheme = 'exact';
}

async function registryFor(schemes: readonly string[]): Promise<SchemeRegistry> {
  @Module({
    imports: [DiscoveryModule],
    providers: [
      scheme('exact', true),
      scheme('batch-settlement', false),
      NotAScheme,
      SchemeRegistry,
      { provide: PAYMENT_SETTINGS.token, useValue: { schemes } as Partial<PaymentConfig> },
    ],
  })
  class Host {}
  const module = await Test.createTestingModule({ imports: [Host] }).compile();
  return module.get(SchemeRegistry);
}

describe('SchemeRegistry', () => {
  it('offers the registered schemes in X402_SCHEMES order, and tells v1 clients only theirs', async () => {
    const registry = await registryFor(['batch-settlement', 'exact']);
    expect(registry.offered().map((plugin) => plugin.scheme)).toEqual([
      'batch-settlement',
      'exact',
    ]);
    expect([...registry.offeredToV1()]).toEqual(['exact']);
    expect(registry.named('exact')?.scheme).toBe('exact');
  });

  it('leaves a registered scheme that X402_SCHEMES does not list unoffered', async () => {
    const registry = await registryFor(['exact']);
    expect(registry.offered().map((plugin) => plugin.scheme)).toEqual(['exact']);
    expect(registry.named('batch-settlement')).toBeUndefined();
  });

  it('stops start-up on a name no registered scheme implements, naming the registered ones', async () => {
    const registry = await registryFor(['exact', 'upto']);
    expect(() => registry.offered()).toThrow(StartupError);
    expect(() => registry.offered()).toThrow(
      'X402_SCHEMES names upto, which no registered scheme implements (registered: exact, batch-settlement)',
    );
  });
});
