/**
 * The NestJS reference: an ordinary Nest application on the same FastifyAdapter, one controller
 * with a `@Get` handler per recorded route, its status from `@HttpCode` and its headers from
 * `@Header`, returning the recorded body, the way the product's own controllers answer (e.g.
 * src/assets/assets.controller.ts). Every request goes through Nest's router and controller
 * pipeline; nothing of the product runs: no CORS, request id, metrics, rate limit, venue polling
 * or chain checks. `products/nest` is what the product adds to a plain Nest app.
 */
import 'reflect-metadata';
import {
  applyDecorators,
  Controller,
  Get,
  Header,
  HttpCode,
  Module,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { RecordedResponse } from './targets.js';

/**
 * A controller whose handlers answer `routes`: the paths are only known at run time, so each
 * handler is added to the class and given the decorators a hand-written one would carry.
 */
function recordedRoutesController(routes: Record<string, RecordedResponse>): Type {
  @Controller()
  class RecordedRoutesController {}
  Object.entries(routes).forEach(([path, recorded], index) => {
    const name = `route${String(index)}`;
    const descriptor: PropertyDescriptor = {
      value: (): string => recorded.body,
      writable: true,
      configurable: true,
    };
    Object.defineProperty(RecordedRoutesController.prototype, name, descriptor);
    applyDecorators(
      Get(path),
      HttpCode(recorded.status),
      ...Object.entries(recorded.headers).map(([header, value]) => Header(header, value)),
    )(RecordedRoutesController.prototype, name, descriptor);
  });
  return RecordedRoutesController;
}

export async function startReferenceNest(
  routes: Record<string, RecordedResponse>,
): Promise<string> {
  @Module({ controllers: [recordedRoutesController(routes)] })
  class ReferenceModule {}
  const app = await NestFactory.create<NestFastifyApplication>(
    ReferenceModule,
    new FastifyAdapter(),
    { logger: false },
  );
  await app.listen(0, '127.0.0.1');
  return (await app.getUrl()).replace('[::1]', '127.0.0.1');
}
