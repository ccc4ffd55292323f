import { IsOptional, Matches } from 'class-validator';
import type { SettingsSection } from '../config/settings.js';

/** Where instances share their state; without a Redis URL everything stays in this process. */
export interface SharedStateSettings {
  /** REDIS_URL (secret): the ledger, payment-identifiers, prices and polling lock live there. */
  readonly redisUrl: string | undefined;
}

class SharedStateVariables {
  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;
}

export const SHARED_STATE_SETTINGS: SettingsSection<SharedStateVariables, SharedStateSettings> = {
  token: Symbol('SharedStateSettings'),
  variables: SharedStateVariables,
  // redis://user:password@host
  secrets: ['REDIS_URL'],
  build: (variables) => ({ redisUrl: variables.REDIS_URL }),
};
