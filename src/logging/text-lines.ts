/**
 * LOG_FORMAT=text: each record pino serialises, rewritten as one readable line (time, level,
 * `[context] message`, then the other fields as `key=value`) before it reaches the destination.
 * Control characters are escaped wherever they occur, so no logged text can start a line.
 */
import type { DestinationStream } from 'pino';

/** Each level as a line shows it, padded to the longest (`VERBOSE`) so that messages line up. */
const LEVEL_TEXT: Readonly<Record<string, string>> = {
  fatal: 'FATAL  ',
  error: 'ERROR  ',
  warn: 'WARN   ',
  log: 'LOG    ',
  debug: 'DEBUG  ',
  verbose: 'VERBOSE',
};

/** Every control character, the C1 range and the JavaScript line separators included. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** A value written bare: no space, quote, `=`, backslash or control character. */
// eslint-disable-next-line no-control-regex
const BARE = /^[^\s"=\\\u0000-\u001f\u007f-\u009f\u2028\u2029]+$/;

/** `text` with every control character written as an escape (`\n`, `\u001b`). */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, escapeOne);
}

function escapeOne(character: string): string {
  if (character === '\n') return '\\n';
  if (character === '\r') return '\\r';
  if (character === '\t') return '\\t';
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** One of pino's JSON records as a text line, without its line break. */
export function textLine(record: string): string {
  let fields: Record<string, unknown>;
  try {
    fields = JSON.parse(record) as Record<string, unknown>;
  } catch {
    return escapeControl(record.trimEnd());
  }
  const { level, context } = fields;
  const levelText = (typeof level === 'string' ? LEVEL_TEXT[level] : undefined) ?? textOf(level);
  let line = `${textOf(fields['time'])} ${levelText}`;
  if (context !== undefined) line += ` [${textOf(context)}]`;
  line += ` ${textOf(fields['message'])}`;
  for (const key in fields) {
    if (key === 'time' || key === 'level' || key === 'context' || key === 'message') continue;
    const value = fields[key];
    if (value !== undefined) line += ` ${escapeControl(key)}=${valueText(value)}`;
  }
  return line;
}

/** A head field as printable text. */
function textOf(value: unknown): string {
  if (value === undefined) return '';
  return escapeControl(typeof value === 'string' ? value : JSON.stringify(value));
}

/** A field's value: bare when plain, else quoted JSON, escaped to one line. */
function valueText(value: unknown): string {
  if (typeof value === 'string' && BARE.test(value)) return value;
  return escapeControl(JSON.stringify(value));
}

/** A destination that writes pino's records to `out` as text lines. */
export function textDestination(out: DestinationStream): DestinationStream {
  return {
    write(record: string): void {
      out.write(`${textLine(record)}\n`);
    },
  };
}
