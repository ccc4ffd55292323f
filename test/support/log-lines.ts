/** A log destination a test reads: every line pino wrote, as text and (in JSON format) parsed. */
import type { DestinationStream } from 'pino';

export type LogRecord = Record<string, unknown>;

export class LogLines implements DestinationStream {
  readonly lines: string[] = [];

  write(chunk: string): void {
    this.lines.push(...chunk.split('\n').filter((line) => line !== ''));
  }

  /** The lines as JSON records (LOG_FORMAT=json); a line that is not one object fails the test. */
  records(): LogRecord[] {
    return this.lines.map((line) => JSON.parse(line) as LogRecord);
  }

  /** The lines matching `match`, once at least one was written (an access line follows its answer). */
  async awaitLines(match: (line: string) => boolean, ms = 5000): Promise<string[]> {
    for (const deadline = Date.now() + ms; ;) {
      const found = this.lines.filter(match);
      if (found.length > 0 || Date.now() > deadline) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** The records matching `match`, once at least one was written. */
  async awaitRecords(match: (record: LogRecord) => boolean, ms = 5000): Promise<LogRecord[]> {
    for (const deadline = Date.now() + ms; ;) {
      const found = this.records().filter(match);
      if (found.length > 0 || Date.now() > deadline) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  clear(): void {
    this.lines.length = 0;
  }
}
