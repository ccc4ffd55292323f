import { Injectable, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { METERED_UNIT, PAID_PRICE, type UsdPrice } from './paid-price.js';
import { controllerRoutePath } from '../../common/controller-path.js';

/** A route sold per request, as found on the controllers. */
export interface PaidRoute {
  readonly method: string;
  /** Nest path with `:param` placeholders, e.g. `/v1/ticker/:symbol`. */
  readonly path: string;
  readonly price: UsdPrice;
  readonly handler: string;
  /** Sold per unit delivered (`@Metered`): the unit (`update`), its price being `price`. */
  readonly meteredUnit?: string;
}

/** Finds every `@Paid` handler through Nest's discovery, so the price list lives on the routes. */
@Injectable()
export class PaidRouteExplorer {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  explore(): PaidRoute[] {
    const routes: PaidRoute[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const controller = wrapper.metatype as (new (...args: never[]) => object) | null;
      if (controller === null || typeof controller !== 'function') continue;
      const prototype = controller.prototype as Record<string, unknown>;
      const base = this.reflector.get<string | string[] | undefined>(PATH_METADATA, controller);
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name] as (...args: unknown[]) => unknown;
        const price = this.reflector.get<UsdPrice | undefined>(PAID_PRICE, handler);
        if (price === undefined) continue;
        const method =
          this.reflector.get<RequestMethod | undefined>(METHOD_METADATA, handler) ??
          RequestMethod.GET;
        const path = this.reflector.get<string | string[] | undefined>(PATH_METADATA, handler);
        const meteredUnit = this.reflector.get<string | undefined>(METERED_UNIT, handler);
        routes.push({
          method: RequestMethod[method],
          path: controllerRoutePath(base, path),
          price,
          handler: `${controller.name}.${name}`,
          ...(meteredUnit === undefined ? {} : { meteredUnit }),
        });
      }
    }
    return routes.sort((a, b) => a.path.localeCompare(b.path));
  }
}
