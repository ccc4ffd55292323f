import { IsOptional, Matches } from 'class-validator';
import { splitList, type SettingsSection } from '../config/settings.js';
import { SYMBOL_PATTERN } from '../common/symbol-format.js';

const COMMA_LIST = /^\s*[^,\s]+(\s*,\s*[^,\s]+)*\s*$/;

class AssetsVariables {
  @IsOptional()
  @Matches(COMMA_LIST, { message: 'ASSETS must be a comma-separated list of symbols' })
  ASSETS?: string;
}

/** Symbols to sell instead of the default catalogue; undefined means the default. */
export const ASSETS_SETTINGS: SettingsSection<AssetsVariables, readonly string[] | undefined> = {
  token: Symbol('AssetsSettings'),
  variables: AssetsVariables,
  build: ({ ASSETS: list }, { problems }) =>
    list === undefined ? undefined : parseAssets(list, problems),
};

function parseAssets(value: string, problems: string[]): string[] {
  const symbols = splitList(value).map((symbol) => symbol.toUpperCase());
  const malformed = symbols.filter((symbol) => !SYMBOL_PATTERN.test(symbol));
  if (malformed.length > 0) {
    problems.push(`ASSETS has malformed symbol(s) ${malformed.join(', ')}; use letters and digits`);
  }
  if (new Set(symbols).size !== symbols.length) problems.push('ASSETS lists a symbol twice');
  return symbols;
}
