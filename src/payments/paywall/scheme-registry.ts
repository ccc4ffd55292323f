import { Inject, Injectable } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { StartupError } from '../../common/startup-error.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../payments.settings.js';
import { SELLER_SCHEME, type SellerSchemePlugin } from './seller-scheme.js';

/**
 * The schemes the service sells with: every `@SellerScheme()` provider in the app, offered in
 * X402_SCHEMES order. A scheme id may have several plug-ins, one per network family (each says
 * which networks it `serves`). A name in X402_SCHEMES that no provider implements stops start-up.
 */
@Injectable()
export class SchemeRegistry {
  private offeredSchemes: readonly SellerSchemePlugin[] | undefined;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
    @Inject(PAYMENT_SETTINGS.token) private readonly payments: PaymentConfig,
  ) {}

  /** The offered plug-ins, in X402_SCHEMES order (found once, on first use). */
  offered(): readonly SellerSchemePlugin[] {
    this.offeredSchemes ??= this.discover();
    return this.offeredSchemes;
  }

  /** The offered plug-ins that sell on `network`, in X402_SCHEMES order. */
  servingOn(network: string): readonly SellerSchemePlugin[] {
    return this.offered().filter((plugin) => plugin.serves(network));
  }

  /** The offered plug-in for a scheme id on a network, if any. */
  named(scheme: unknown, network: string): SellerSchemePlugin | undefined {
    return this.offered().find((plugin) => plugin.scheme === scheme && plugin.serves(network));
  }

  /** Whether v1 clients are offered `scheme` on `network`. */
  offersToV1(scheme: string, network: string): boolean {
    return this.named(scheme, network)?.offeredToV1 === true;
  }

  private discover(): readonly SellerSchemePlugin[] {
    const registered = new Map<string, SellerSchemePlugin[]>();
    for (const wrapper of this.discovery.getProviders()) {
      const metatype = wrapper.metatype;
      const instance: unknown = wrapper.instance;
      if (typeof metatype !== 'function' || instance === undefined || instance === null) continue;
      if (this.reflector.get<boolean | undefined>(SELLER_SCHEME, metatype) !== true) continue;
      const plugin = instance as SellerSchemePlugin;
      registered.set(plugin.scheme, [...(registered.get(plugin.scheme) ?? []), plugin]);
    }
    return this.payments.schemes.flatMap((scheme) => {
      const plugins = registered.get(scheme);
      if (plugins === undefined) {
        throw new StartupError(
          `Cannot start: X402_SCHEMES names ${scheme}, which no registered scheme implements ` +
            `(registered: ${[...registered.keys()].join(', ') || 'none'}).`,
        );
      }
      return plugins;
    });
  }
}
