import { pino, type DestinationStream } from 'pino';
import PinoPretty from 'pino-pretty';

/** The message's key in every record, JSON or text. */
export const MESSAGE_KEY = 'message';

/**
 * LOG_FORMAT=text: each record pino writes, turned by pino-pretty into one line (time, level,
 * `[context] message`, then the record's other fields as JSON) and written at once, in this
 * process. Control characters in a message or a context are escaped: no text starts a line.
 */
export function textDestination(destination?: DestinationStream): DestinationStream {
  const out = destination ?? pino.destination({ dest: 1, sync: true });
  const pretty = PinoPretty.prettyFactory({
    colorize: destination === undefined && PinoPretty.isColorSupported,
    singleLine: true,
    translateTime: 'SYS:standard',
    messageKey: MESSAGE_KEY,
    ignore: 'context',
    // errors' stacks stay in the one-line JSON instead of multi-line blocks
    errorLikeObjectKeys: [],
    messageFormat: (log, messageKey) => {
      const message = oneLine(textOf(log[messageKey]));
      const context = log['context'];
      return typeof context === 'string' ? `[${oneLine(context)}] ${message}` : message;
    },
  });
  return {
    write: (record: string) => {
      out.write(pretty(record));
    },
  };
}

/** A record's message: a string as it is, anything else (an object logged as such) as JSON. */
function textOf(message: unknown): string {
  if (typeof message === 'string') return message;
  return message === undefined ? '' : JSON.stringify(message);
}

/** `text` with every control character (line breaks, escape sequences) written as an escape. */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, escaped);
}

function escaped(character: string): string {
  if (character === '\n') return '\\n';
  if (character === '\r') return '\\r';
  if (character === '\t') return '\\t';
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}
