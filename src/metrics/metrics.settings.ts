import { IsOptional, IsString, Matches } from 'class-validator';
import type { SettingsSection } from '../config/settings.js';

class MetricsVariables {
  /** When set, GET /metrics requires `Authorization: Bearer <METRICS_TOKEN>`. */
  @IsOptional()
  @IsString()
  @Matches(/^\S{16,}$/, { message: 'METRICS_TOKEN must be at least 16 characters, no spaces' })
  METRICS_TOKEN?: string;
}

/** The bearer token GET /metrics requires, if any. */
export const METRICS_TOKEN_SETTINGS: SettingsSection<MetricsVariables, string | undefined> = {
  token: Symbol('MetricsToken'),
  variables: MetricsVariables,
  secrets: ['METRICS_TOKEN'],
  build: (variables) => variables.METRICS_TOKEN,
};
