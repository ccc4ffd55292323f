import 'reflect-metadata';
import { jest } from '@jest/globals';
import type { Mock } from 'jest-mock';

type Handler = (...args: never[]) => unknown;

/**
 * Spies on a controller handler before the app is built, so the router calls through the spy
 * (counting runs, or failing on demand). Nest reads routes, guards and prices from metadata on
 * the handler function itself, so the metadata is carried over to the spy.
 */
export function spyOnHandler<F extends Handler>(
  prototype: object,
  method: string,
): { spy: Mock<F>; original: F } {
  const original = (prototype as Record<string, F>)[method];
  if (original === undefined) throw new Error(`no handler ${method}`);
  const spy = jest.spyOn(prototype as Record<string, F>, method as never) as unknown as Mock<F>;
  for (const key of Reflect.getMetadataKeys(original)) {
    Reflect.defineMetadata(key, Reflect.getMetadata(key, original), spy);
  }
  return { spy, original };
}
