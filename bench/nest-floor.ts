/**
 * The framework's floor: an empty NestJS application on the same FastifyAdapter, answering the
 * product's recorded bytes from each route's own `onRequest` hook, the way the product's prepared
 * answers do (src/common/fast-answers.ts). Nest's adapter hooks run, nothing of the product does:
 * no CORS, request id, metrics, rate limit, venue polling or chain checks. `product/nest` is
 * what the product adds to the design card's stack; `nest/bare` is what the stack costs.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { RecordedResponse } from './targets.js';

@Module({})
class EmptyModule {}

export async function startNestFloor(routes: Record<string, RecordedResponse>): Promise<string> {
  const app = await NestFactory.create<NestFastifyApplication>(EmptyModule, new FastifyAdapter(), {
    logger: false,
  });
  const fastify = app.getHttpAdapter().getInstance();
  for (const [path, recorded] of Object.entries(routes)) {
    fastify.get(path, {
      onRequest: (_request, reply) => {
        void reply.code(recorded.status).headers(recorded.headers).send(recorded.body);
      },
      handler: () => undefined,
    });
  }
  await app.listen(0, '127.0.0.1');
  return (await app.getUrl()).replace('[::1]', '127.0.0.1');
}
