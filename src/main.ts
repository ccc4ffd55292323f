import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import { createApp } from './app.js';
import { StartupError } from './common/startup-error.js';
import { APP_CONFIG, ConfigError, type AppConfig } from './config/app-config.js';

async function bootstrap(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  const app = await createApp();
  const { http } = app.get<AppConfig>(APP_CONFIG);
  await app.listen(http.port, http.host);
  Logger.log(`Serving on ${await app.getUrl()} (docs at /docs, OpenAPI at /openapi.json)`, 'Main');
}

bootstrap().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof StartupError) console.error(error.message);
  else console.error(error);
  process.exit(1);
});
