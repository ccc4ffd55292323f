import { getMetadataStorage, validateSync } from 'class-validator';

/** What a section's `build` may read besides its own validated variables. */
export interface SettingsContext {
  /** The raw environment, for variables named by pattern (such as MARKET_<ID>_URL). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Add one sentence per problem; never a secret's value. */
  readonly problems: string[];
}

/**
 * One feature's slice of the environment, declared next to the code that uses it: the class
 * whose properties are its variables (decorators validate, initialisers give defaults), which
 * of them are secrets, and how they become the feature's typed settings.
 */
export interface SettingsSection<V extends object, T> {
  /** Injection token the feature reads its settings through. */
  readonly token: symbol;
  readonly variables: new () => V;
  /** Variables whose values must never appear in an error or a log. */
  readonly secrets?: readonly (keyof V & string)[];
  /** Undefined when a problem was recorded. */
  build(variables: V, context: SettingsContext): T | undefined;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a section of any variables
export type AnySection = SettingsSection<any, unknown>;

/** The settings a section builds. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- only T is read
export type SettingsOf<S> = S extends SettingsSection<any, infer T> ? T : never;

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** What reading every section gave: each section's settings (undefined when it had a problem). */
export interface CollectedSettings<S extends Record<string, AnySection>> {
  readonly settings: { readonly [K in keyof S]: SettingsOf<S[K]> | undefined };
  readonly problems: string[];
}

/**
 * Reads every section from the environment and records every problem of every section, so the
 * operator sees them all at once; the caller throws one ConfigError when there are any.
 */
export function collectSettings<S extends Record<string, AnySection>>(
  env: Readonly<Record<string, string | undefined>>,
  sections: S,
): CollectedSettings<S> {
  const problems: string[] = [];
  const settings: Record<string, unknown> = {};
  for (const [name, section] of Object.entries(sections)) {
    settings[name] = readSection(env, section, problems);
  }
  return { settings: settings as CollectedSettings<S>['settings'], problems };
}

/** Every variable name a section reads: the properties its class validates. */
export function variableNames(section: AnySection): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(
    section.variables,
    '',
    true,
    false,
  );
  return [...new Set(metadata.map((entry) => entry.propertyName))];
}

function readSection(
  env: Readonly<Record<string, string | undefined>>,
  section: AnySection,
  problems: string[],
): unknown {
  const before = problems.length;
  const variables = assignVariables(env, section, problems);
  const secrets = new Set<string>(section.secrets ?? []);
  for (const error of validateSync(variables)) {
    for (const message of Object.values(error.constraints ?? {})) {
      problems.push(
        secrets.has(error.property) ? message : `${message} (got "${String(error.value)}")`,
      );
    }
  }
  const settings = section.build(variables, { env, problems });
  return problems.length > before ? undefined : settings;
}

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)$/;

/** Copies set variables onto the defaults, turning those with a numeric default into numbers. */
function assignVariables(
  env: Readonly<Record<string, string | undefined>>,
  section: AnySection,
  problems: string[],
): object {
  const variables = new section.variables() as Record<string, unknown>;
  for (const key of variableNames(section)) {
    const raw = env[key]?.trim();
    if (raw === undefined || raw === '') continue;
    const fallback = variables[key];
    if (typeof fallback === 'number') {
      const integer = Number.isInteger(fallback);
      if ((integer ? INTEGER : DECIMAL).test(raw)) variables[key] = Number(raw);
      else
        problems.push(
          `${key} must be ${integer ? 'an integer' : 'a decimal number'} (got "${raw}")`,
        );
    } else {
      variables[key] = raw;
    }
  }
  return variables;
}

/** Splits a comma-separated variable into trimmed items (empty items kept, to be reported). */
export function splitList(value: string): string[] {
  return value.split(',').map((item) => item.trim());
}

/** What `@IsUrl` accepts for an http(s) endpoint, local hosts included. */
export const URL_OPTIONS = {
  require_tld: false,
  require_protocol: true,
  protocols: ['http', 'https'],
};
