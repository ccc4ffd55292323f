import { type ModuleMetadata } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module.js';
import { loadConfig, type AppConfig } from './app-config.js';
import { answerFrameworkError } from './common/framework-errors.js';
import {
  httpServerOptions,
  originForm,
  refuseFragments,
  refuseRequestBodies,
} from './common/http-server.js';
import { MethodTable } from './common/method-table.js';
import { ProblemDetailsFilter } from './common/problem-details.filter.js';
import { X402_CORS } from './common/cors.js';
import { installHttpCaching } from './common/http-caching.js';
import { installAccessLog } from './logging/access-log.js';
import { createLogs } from './logging/log-output.js';
import { PinoNestLogger } from './logging/pino-nest-logger.js';
import { requestIdOf } from './logging/request-id.js';
import { routeSdkConsole } from './logging/sdk-console.js';
import { installHttpMetrics } from './metrics/http-metrics.js';
import { MetricsService } from './metrics/metrics.service.js';
import { buildOpenApiDocument } from './openapi/openapi-document.js';
import { x402RequestInterceptor } from './openapi/swagger-wallet-payment.js';
import { PaidRouteExplorer, installPaywall } from './payments/index.js';

/** The OpenAPI document each app serves at /openapi.json, as createApp built it. */
const documents = new WeakMap<NestFastifyApplication, OpenAPIObject>();

/** The document `app` serves, paid operations and all; for openapi.json and its drift test. */
export function servedOpenApiDocument(app: NestFastifyApplication): OpenAPIObject {
  const document = documents.get(app);
  if (document === undefined) throw new Error('not an app built by createApp');
  return document;
}

export interface CreateAppOptions {
  readonly config?: AppConfig;
  readonly logger?: false;
  /** Where log lines go instead of standard output (a test reads them there). */
  readonly logDestination?: DestinationStream;
  /** Feature modules to serve beside the built-in ones; their `@Paid` routes are sold too. */
  readonly features?: NonNullable<ModuleMetadata['imports']>;
  /** The local test stack's notice, on /docs and /v1/sources; none for the service itself. */
  readonly notice?: string;
  /**
   * The local stack's test buyer signs "Try it out" payments on /docs (`POST /sandbox/wallet`,
   * installed by the local stack); otherwise only a browser wallet pays there.
   */
  readonly localBuyer?: boolean;
}

/** Swagger's answers change only with a deploy: a proxy may keep them a few minutes. */
const DOCS_CACHE = 'public, max-age=300';
/** The Swagger UI's own files, as the static plugin serves them (`/docs/*`). */
const DOCS_FILES_CACHE = 'public, max-age=3600';

/** Builds the application exactly as `main` serves it; tests and scripts use this too. */
export async function createApp(options: CreateAppOptions = {}): Promise<NestFastifyApplication> {
  const config = options.config ?? loadConfig(process.env);
  const logged = options.logger !== false;
  const logs = createLogs({
    format: config.logFormat,
    level: logged ? config.logLevel : 'silent',
    destination: options.logDestination,
  });
  if (logged) routeSdkConsole();
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, options.features, options.notice ?? null),
    new FastifyAdapter({
      ...httpServerOptions(config.http),
      rewriteUrl: originForm,
      // the client address rate limits count by, behind a reverse proxy (TRUST_PROXY)
      trustProxy: config.rateLimits.trustProxy,
      routerOptions: { maxParamLength: 200 },
      // HEAD twins of GET routes; paid ones refuse theirs (MethodTable): a HEAD cannot carry a paid body.
      exposeHeadRoutes: true,
      frameworkErrors: answerFrameworkError,
      // the caller's X-Request-Id when plain, else a UUID; returned and on every log line
      genReqId: requestIdOf,
    }),
    {
      logger: logged ? new PinoNestLogger(logs.events) : false,
      abortOnError: false,
    },
  );
  app.getHttpServer().maxConnections = config.http.maxConnections;
  const fastify = app.getHttpAdapter().getInstance();
  const methods = new MethodTable(
    app
      .get(PaidRouteExplorer)
      .explore()
      .filter((route) => route.method === 'GET')
      .map((route) => route.path),
  );
  // before any route is added (the CORS plugin adds `OPTIONS *`): each route counts its answers
  installHttpMetrics(fastify, app.get(MetricsService), methods);
  // the request id and log store first, so every later hook and the handler log under it
  installAccessLog(fastify, logs.access, methods);
  installHttpCaching(fastify, {
    '/openapi.json': DOCS_CACHE,
    '/openapi.yaml': DOCS_CACHE,
    '/docs': DOCS_CACHE,
    '/docs/': DOCS_CACHE,
    '/docs/index.html': DOCS_CACHE,
    '/docs/swagger-ui-init.js': DOCS_CACHE,
    '/docs/*': DOCS_FILES_CACHE,
  });
  app.enableCors(X402_CORS);
  fastify.addHook('onRequest', refuseRequestBodies);
  fastify.addHook('onRequest', refuseFragments);
  methods.install(fastify);
  app.useGlobalFilters(new ProblemDetailsFilter(methods));
  const localBuyer = options.localBuyer === true;
  const document = buildOpenApiDocument(app, options.notice, localBuyer);
  installPaywall(app, document);
  documents.set(app, document);
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
    // "Try it out" pays with the browser's wallet (or the local buyer); Swagger UI gets the
    // function as source text and the flag as an option it keeps
    swaggerOptions: { requestInterceptor: x402RequestInterceptor, x402LocalBuyer: localBuyer },
  });
  return app;
}
