import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { SchemeNetworkServer } from '@x402/core/types';
import { StartupError } from '../../common/startup-error.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../payments.settings.js';
import { SchemeRegistry } from './scheme-registry.js';
import { SellerScheme, type OpenSale, type SellerSchemePlugin } from './seller-scheme.js';

function scheme(
  name: string,
  offeredToV1: boolean,
  family = 'eip155:',
): new () => SellerSchemePlugin {
  @SellerScheme()
  class Registered implements SellerSchemePlugin {
    readonly scheme = name;
    readonly offeredToV1 = offeredToV1;
    serves(network: string): boolean {
      return network.startsWith(family);
    }
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
      scheme('exact', false, 'solana:'),
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
      'exact',
    ]);
    expect(registry.offersToV1('exact', 'eip155:8453')).toBe(true);
    expect(registry.offersToV1('batch-settlement', 'eip155:8453')).toBe(false);
    expect(registry.named('exact', 'eip155:8453')?.scheme).toBe('exact');
  });

  it('keeps one plug-in per network family under one scheme id, each serving its own networks', async () => {
    const registry = await registryFor(['exact']);
    expect(registry.offered()).toHaveLength(2);
    const [onBase] = registry.servingOn('eip155:8453');
    const [onSolana] = registry.servingOn('solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1');
    expect(onBase).toBeDefined();
    expect(onSolana).toBeDefined();
    expect(onBase).not.toBe(onSolana);
    expect(registry.named('exact', 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1')).toBe(onSolana);
    expect(registry.offersToV1('exact', 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1')).toBe(false);
  });

  it('leaves a registered scheme that X402_SCHEMES does not list unoffered', async () => {
    const registry = await registryFor(['exact']);
    expect(registry.offered().map((plugin) => plugin.scheme)).toEqual(['exact', 'exact']);
    expect(registry.named('batch-settlement', 'eip155:8453')).toBeUndefined();
  });

  it('stops start-up on a name no registered scheme implements, naming the registered ones', async () => {
    const registry = await registryFor(['exact', 'upto']);
    expect(() => registry.offered()).toThrow(StartupError);
    expect(() => registry.offered()).toThrow(
      'X402_SCHEMES names upto, which no registered scheme implements (registered: exact, batch-settlement)',
    );
  });
});
