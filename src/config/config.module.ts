import { Global, Module, type DynamicModule } from '@nestjs/common';
import { APP_CONFIG, loadConfig, type AppConfig } from './app-config.js';

/** Provides the one AppConfig; tests pass a ready object, the app builds it from process.env. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig = loadConfig(process.env)): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: APP_CONFIG, useValue: config }],
      exports: [APP_CONFIG],
    };
  }
}
