import { Module, RequestMethod, type DynamicModule } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { pinoHttpOptions, type LogOutput } from './log-output.js';
import { RequestLog } from './request-log.js';

/**
 * Logging on pino through nestjs-pino: Nest's logger (`app.useLogger(app.get(NativeLogger))`,
 * so `new Logger(Name).log(message, fields)` keeps its meaning), pino-http's access line and
 * request context, and RequestLog for fields a request's access line should carry. nestjs-pino
 * keeps one pino logger per process, built from the first app's output.
 */
@Module({})
export class LoggingModule {
  static forRoot(output: LogOutput): DynamicModule {
    return {
      module: LoggingModule,
      global: true,
      imports: [
        LoggerModule.forRoot({
          pinoHttp: pinoHttpOptions(output),
          // every path: nestjs-pino's default (`{/*splat}`) gets a leading slash from Nest 12.5
          // and then matches `/` alone
          forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
          // Nest's `log(message, { fields })`: the fields at the top level of the record
          nativeLogger: { flattenParams: true },
          // RequestLog's fields reach the access line too
          assignResponse: true,
        }),
      ],
      providers: [RequestLog],
      exports: [RequestLog],
    };
  }
}
