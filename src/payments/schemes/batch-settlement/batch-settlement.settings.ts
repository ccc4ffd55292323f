import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import type { SettingsSection } from '../../../config/settings.js';

/** Batch settlement: vouchers recorded locally, claimed and settled on chain later. */
export interface BatchSettlementConfig {
  /** Claim + settle period (X402_BATCH_SETTLE_INTERVAL_MS). */
  readonly settleIntervalMs: number;
  /** Unclaimed atomic units on one channel that trigger a claim before the period ends; 0: off. */
  readonly claimThreshold: bigint;
  /** Channel state directory without REDIS_URL (X402_BATCH_DATA_DIR). */
  readonly dataDir: string;
  /** The receiver authorizer's key (secret); undefined: the facilitator's authorizer. */
  readonly authorizerPrivateKey: `0x${string}` | undefined;
}

export class BatchSettlementVariables {
  /**
   * How often recorded vouchers are claimed on chain and the claims settled to X402_PAY_TO. At
   * most 10 min: a payer's timed withdrawal takes at least 15 min, so every voucher is claimed
   * before one can finalize.
   */
  @IsInt()
  @Min(1000)
  @Max(600_000)
  X402_BATCH_SETTLE_INTERVAL_MS = 60_000;

  /** Claim at once when a channel's unclaimed vouchers reach this many atomic units (0: off). */
  @IsInt()
  @Min(0)
  X402_BATCH_CLAIM_THRESHOLD = 1_000_000;

  /**
   * The channels' receiver authorizer (signs claims and refunds). Unset: the facilitator's
   * (embedded: the settlement key). Set the same key on every instance of one service.
   */
  @IsOptional()
  @Matches(/^0x[0-9a-fA-F]{64}$/, {
    message: 'X402_BATCH_AUTHORIZER_PRIVATE_KEY must be 0x and 64 hex digits',
  })
  X402_BATCH_AUTHORIZER_PRIVATE_KEY?: string;

  /** Where channel state lives without REDIS_URL (one JSON file per channel). */
  @IsString()
  X402_BATCH_DATA_DIR = 'data/batch-settlement';
}

/** The batch-settlement scheme's own settings (X402_BATCH_*). */
export const BATCH_SETTLEMENT_SETTINGS: SettingsSection<
  BatchSettlementVariables,
  BatchSettlementConfig
> = {
  token: Symbol('BatchSettlementSettings'),
  variables: BatchSettlementVariables,
  secrets: ['X402_BATCH_AUTHORIZER_PRIVATE_KEY'],
  build: (variables) => ({
    settleIntervalMs: variables.X402_BATCH_SETTLE_INTERVAL_MS,
    claimThreshold: BigInt(variables.X402_BATCH_CLAIM_THRESHOLD),
    dataDir: variables.X402_BATCH_DATA_DIR,
    authorizerPrivateKey: variables.X402_BATCH_AUTHORIZER_PRIVATE_KEY as `0x${string}` | undefined,
  }),
};
