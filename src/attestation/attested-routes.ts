import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { ANSWER_RESOLVER } from '../paid-answers/index.js';
import { PAID_PRICE } from '../payments/index.js';
import { ATTESTED } from './attested.decorator.js';

/**
 * Stops start-up on an `@Attested()` route that could not be signed as declared: one that is
 * not sold (the header goes out only with a sold answer) or names no resolver (the claims are
 * the resolved answer's).
 */
@Injectable()
export class AttestedRoutes implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getControllers()) {
      const controller = wrapper.metatype as (new (...args: never[]) => object) | null;
      if (controller === null || typeof controller !== 'function') continue;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name] as (...args: unknown[]) => unknown;
        if (this.reflector.get<boolean | undefined>(ATTESTED, handler) !== true) continue;
        const route = `${controller.name}.${name}`;
        if (this.reflector.get<unknown>(PAID_PRICE, handler) === undefined) {
          throw new Error(`@Attested() on ${route}: only a @Paid route's answer is signed`);
        }
        if (this.reflector.get<unknown>(ANSWER_RESOLVER, handler) === undefined) {
          throw new Error(
            `@Attested() on ${route}: @Paid names no resolver, whose answer says what is signed`,
          );
        }
      }
    }
  }
}
