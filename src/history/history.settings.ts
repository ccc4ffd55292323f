import { IsInt, Max, Min } from 'class-validator';
import type { SettingsSection } from '../config/settings.js';

/** What the history routes may ask of the venues. */
export interface HistorySettings {
  /** Venue candle calls in flight at once, across every history request of an instance. */
  readonly venueCalls: number;
}

class HistoryVariables {
  @IsInt()
  @Min(1)
  @Max(1000)
  HISTORY_VENUE_CALLS = 16;
}

export const HISTORY_SETTINGS: SettingsSection<HistoryVariables, HistorySettings> = {
  token: Symbol('HistorySettings'),
  variables: HistoryVariables,
  build: (variables) => ({ venueCalls: variables.HISTORY_VENUE_CALLS }),
};
