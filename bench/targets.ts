/**
 * One server under load, in its own process so its CPU time and memory are its own:
 *
 *   node dist/bench/targets.js product   the app as `main` serves it (createApp, embedded facilitator),
 *                                        loaded from tsc's output (dist/src), as it ships
 *   node dist/bench/targets.js bare      a bare Fastify server replaying the product's recorded bytes
 *   node dist/bench/targets.js nest      an ordinary NestJS app on Fastify, a controller answering
 *                                        them (reference-nest.ts)
 *   node dist/bench/targets.js express   the @x402/express reference: paymentMiddleware, in-process
 *                                        facilitator settling on the same chain, the same price
 *
 * Started by bench/paid-speed.ts with `fork` and plain `node` (no flags); its settings arrive as
 * JSON in BENCH_TARGET, and it answers `usage` messages with its CPU time (user + kernel, and
 * kernel alone), its garbage collection pauses and memory.
 */
import Fastify from 'fastify';
import path from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../test/support/project-root.js';
import type { PaymentRequirements } from '@x402/core/types';

/** A response as the product sent it, replayed byte for byte by the bare server. */
export interface RecordedResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export type TargetSettings =
  | { readonly kind: 'product'; readonly env: Record<string, string> }
  | { readonly kind: 'bare'; readonly routes: Record<string, RecordedResponse> }
  | { readonly kind: 'nest'; readonly routes: Record<string, RecordedResponse> }
  | {
      readonly kind: 'express';
      readonly rpcUrl: string;
      readonly chainId: number;
      readonly settlerKey: `0x${string}`;
      /** The product's own requirement for the route, so both sell exactly the same thing. */
      readonly requirement: PaymentRequirements;
      readonly path: string;
      readonly paidBody: RecordedResponse;
    };

export type TargetMessage =
  | { readonly type: 'ready'; readonly url: string }
  | {
      readonly type: 'usage';
      readonly cpuMicros: number;
      /** The part of cpuMicros spent in the kernel. */
      readonly systemMicros: number;
      /** Main-thread time in garbage collection pauses (V8's `gc` performance entries). */
      readonly gcMicros: number;
      readonly rss: number;
      readonly heapUsed: number;
      /** V8 heap reserved (used or not), and memory outside it (Buffers, native). */
      readonly heapTotal: number;
      readonly external: number;
    };

async function start(settings: TargetSettings): Promise<string> {
  switch (settings.kind) {
    case 'product':
      return startProduct(settings.env);
    case 'bare':
      return startBare(settings.routes);
    case 'nest': {
      const { startReferenceNest } = await import('./reference-nest.js');
      return startReferenceNest(settings.routes);
    }
    case 'express': {
      const { startExpress } = await import('./reference-express.js');
      return startExpress(settings);
    }
  }
}

/**
 * Each side loads only its own modules, so its RSS is its own: the product's come from tsc's
 * output, the files `node dist/src/main.js` runs.
 */
async function startProduct(env: Record<string, string>): Promise<string> {
  const from = (file: string): string =>
    pathToFileURL(path.join(projectRoot(import.meta.url), 'dist/src', file)).href;
  // main.ts loads decorator metadata's polyfill before the app; the bench starts at createApp
  await import('reflect-metadata');
  const { createApp } = (await import(from('app.js'))) as typeof import('../src/app.js');
  const { loadConfig } = (await import(
    from('app-config.js')
  )) as typeof import('../src/app-config.js');
  const app = await createApp({ config: loadConfig(env) });
  await app.listen(0, '127.0.0.1');
  return (await app.getUrl()).replace('[::1]', '127.0.0.1');
}

async function startBare(routes: Record<string, RecordedResponse>): Promise<string> {
  const server = Fastify();
  for (const [path, recorded] of Object.entries(routes)) {
    server.get(path, (_request, reply) => {
      void reply.code(recorded.status).headers(recorded.headers).send(recorded.body);
    });
  }
  return server.listen({ port: 0, host: '127.0.0.1' });
}

const settings = JSON.parse(process.env['BENCH_TARGET'] ?? '{}') as TargetSettings;
let gcMicros = 0;
new PerformanceObserver((entries) => {
  for (const entry of entries.getEntries()) gcMicros += entry.duration * 1000;
}).observe({ entryTypes: ['gc'] });
const send = (message: TargetMessage): void => {
  process.send?.(message);
};
process.on('message', (message: unknown) => {
  if (message !== 'usage') return;
  const cpu = process.cpuUsage();
  const memory = process.memoryUsage();
  send({
    type: 'usage',
    cpuMicros: cpu.user + cpu.system,
    systemMicros: cpu.system,
    gcMicros,
    rss: memory.rss,
    heapUsed: memory.heapUsed,
    heapTotal: memory.heapTotal,
    external: memory.external,
  });
});
process.on('disconnect', () => {
  process.exit(0);
});
send({ type: 'ready', url: await start(settings) });
