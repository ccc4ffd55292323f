import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import type { SettingsSection } from '../../../config/settings.js';
import type { UsdPrice } from '../../paywall/paid-price.js';
import { CLIENT_DEFAULT_MAX_DEPOSIT } from './deposit-policy.js';

/** A USD amount as X402_BATCH_MIN_DEPOSIT takes it: USDC has 6 decimals. */
const USD_AMOUNT = /^(0|[1-9]\d*)(\.\d{1,6})?$/;

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
  /** The deposit the offer asks for (X402_BATCH_MIN_DEPOSIT); undefined: sized by minDepositFor. */
  readonly minDeposit: UsdPrice | undefined;
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

  /**
   * The deposit the batch offer asks for (`extra.minDeposit`), in USD. Unset: DEPOSIT_CALLS calls of
   * the cheapest paid route, at most CLIENT_DEFAULT_MAX_DEPOSIT.
   */
  @IsOptional()
  @Matches(USD_AMOUNT, {
    message: 'X402_BATCH_MIN_DEPOSIT must be a USD amount such as 1 or 0.5 (at most 6 decimals)',
  })
  X402_BATCH_MIN_DEPOSIT?: string;

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
  build: (variables, { problems }) => {
    const minDeposit = minDepositOf(variables.X402_BATCH_MIN_DEPOSIT, problems);
    if (minDeposit === null) return undefined;
    return {
      settleIntervalMs: variables.X402_BATCH_SETTLE_INTERVAL_MS,
      claimThreshold: BigInt(variables.X402_BATCH_CLAIM_THRESHOLD),
      dataDir: variables.X402_BATCH_DATA_DIR,
      authorizerPrivateKey: variables.X402_BATCH_AUTHORIZER_PRIVATE_KEY as
        `0x${string}` | undefined,
      minDeposit,
    };
  },
};

/**
 * X402_BATCH_MIN_DEPOSIT as a USD price; null when it is not one (a problem recorded). Above what
 * the official client deposits by default, the client would deposit its cap anyway: refused as a
 * mistake.
 */
function minDepositOf(value: string | undefined, problems: string[]): UsdPrice | undefined | null {
  if (value === undefined) return undefined;
  // a malformed value was reported by its @Matches
  if (!USD_AMOUNT.test(value)) return null;
  const price = `$${value}` as UsdPrice;
  const usd = Number(value);
  if (usd === 0) {
    problems.push('X402_BATCH_MIN_DEPOSIT must be more than 0');
    return null;
  }
  if (usd > Number(CLIENT_DEFAULT_MAX_DEPOSIT.slice(1))) {
    problems.push(
      `X402_BATCH_MIN_DEPOSIT must be at most ${CLIENT_DEFAULT_MAX_DEPOSIT.slice(1)} (USD), what ` +
        "the official client deposits at most unless its buyer raises the client's spend cap " +
        `(got "${value}")`,
    );
    return null;
  }
  return price;
}
