import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { Logger, type INestApplication } from '@nestjs/common';
import { createApp } from './app.js';
import { StartupError } from './common/startup-error.js';
import { HTTP_SETTINGS, type HttpSettings } from './common/server.settings.js';
import { ConfigError } from './config/settings.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from './payments/index.js';
import { ShutdownState } from './health/shutdown-state.js';

async function bootstrap(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  const app = await createApp();
  const http = app.get<HttpSettings>(HTTP_SETTINGS.token);
  const payments = app.get<PaymentConfig>(PAYMENT_SETTINGS.token);
  stopOnSignals(app, payments.verifyTimeoutMs + payments.settleTimeoutMs + GRACE_MS);
  await app.listen(http.port, http.host);
  Logger.log(`Serving on ${await app.getUrl()} (docs at /docs, OpenAPI at /openapi.json)`, 'Main');
}

/** Beyond the longest a paid request can take (verification + settlement), for closing itself. */
const GRACE_MS = 5000;

/**
 * SIGTERM or SIGINT: readiness turns 503, stop taking connections, let requests in flight finish
 * (a paid one gets its settlement and its 200), stop venue polling and streams, exit 0. Requests cannot outlast their verification
 * and settlement deadlines, so shutdown is bounded by them; past that it exits 1.
 */
function stopOnSignals(app: INestApplication, deadlineMs: number): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    app.get(ShutdownState).begin();
    Logger.log(`${signal}: finishing requests in flight, then stopping`, 'Main');
    setTimeout(() => {
      console.error(`Shutdown took over ${deadlineMs} ms; exiting anyway.`);
      process.exit(1);
    }, deadlineMs).unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, stop);
}

bootstrap().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof StartupError) console.error(error.message);
  else console.error(error);
  process.exit(1);
});
