import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { AnySection } from './settings.js';

/**
 * Provides each feature's settings under the feature's own token. The composition root reads
 * the environment once (every problem in one ConfigError) and hands the result in here.
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(
    sections: Readonly<Record<string, AnySection>>,
    settings: Readonly<Record<string, unknown>>,
  ): DynamicModule {
    const providers = Object.entries(sections).map(([name, section]) => ({
      provide: section.token,
      useValue: settings[name],
    }));
    return {
      module: ConfigModule,
      providers,
      exports: providers.map((provider) => provider.provide),
    };
  }
}
