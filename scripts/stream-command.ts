/** `npm run client -- stream ...`: its command line, and its budget in the token's units. */
import { findDefaultAsset } from '@x402/evm';
import type { PaymentRequirements } from '@x402/fetch';
import { formatUnits, parseUnits } from 'viem';

export interface StreamCommand {
  readonly kind: 'stream';
  readonly symbols: string;
  /** USD, as typed (`0.01`). */
  readonly budget: string;
  readonly minMoveBps?: string;
  readonly maxHz?: string;
}

const FLAGS = {
  '--budget': 'budget',
  '--min-move-bps': 'minMoveBps',
  '--max-hz': 'maxHz',
} as const;

/** `stream <SYMBOLS> --budget <USD> [--min-move-bps N] [--max-hz N]`, or what is wrong with it. */
export function parseStreamArgs(args: readonly string[]): StreamCommand | string {
  const symbols: string[] = [];
  const values: Partial<Record<(typeof FLAGS)[keyof typeof FLAGS], string>> = {};
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] ?? '';
    if (arg in FLAGS) {
      const value = args[index + 1];
      if (value === undefined || value.startsWith('--')) return `${arg} takes a value`;
      values[FLAGS[arg as keyof typeof FLAGS]] = value;
      index += 1;
    } else if (arg.startsWith('--')) {
      return `stream does not take ${arg}`;
    } else {
      symbols.push(...arg.split(','));
    }
  }
  if (symbols.length === 0) return 'stream takes a comma list, e.g. stream BTC,ETH --budget 0.01';
  const { budget, minMoveBps, maxHz } = values;
  if (budget === undefined) return 'stream needs --budget <USD>, e.g. --budget 0.01';
  if (!/^\$?\d+(\.\d+)?$/.test(budget))
    return `--budget takes a USD amount such as 0.01 (got "${budget}")`;
  if (minMoveBps !== undefined && !/^\d+(\.\d+)?$/.test(minMoveBps)) {
    return `--min-move-bps takes a number of basis points (got "${minMoveBps}")`;
  }
  if (maxHz !== undefined && !/^\d+(\.\d+)?$/.test(maxHz)) {
    return `--max-hz takes updates per second per symbol (got "${maxHz}")`;
  }
  return {
    kind: 'stream',
    symbols: symbols.map(encodeURIComponent).join(','),
    budget: budget.replace(/^\$/, ''),
    ...(minMoveBps === undefined ? {} : { minMoveBps }),
    ...(maxHz === undefined ? {} : { maxHz }),
  };
}

/** The budget in atomic units, a whole number of updates (rounded down), or why it cannot be. */
export function budgetOf(
  budget: string,
  requirement: PaymentRequirements,
): { atomic: bigint; updates: bigint } | string {
  const unit = BigInt(requirement.amount);
  const decimals = findDefaultAsset(requirement.asset, requirement.network)?.decimals ?? 6;
  const asked = parseUnits(budget, decimals);
  const updates = asked / unit;
  if (updates === 0n) {
    return (
      `--budget ${budget} is below the price of one update (${usd(unit, requirement)}); ` +
      'nothing was paid'
    );
  }
  return { atomic: updates * unit, updates };
}

export function usd(atomic: bigint, requirement: PaymentRequirements): string {
  const decimals = findDefaultAsset(requirement.asset, requirement.network)?.decimals ?? 6;
  return `$${formatUnits(atomic, decimals)}`;
}
