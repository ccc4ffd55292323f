import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from './project-root.js';

const STREAMS = path.join(projectRoot(), 'test', 'fixtures', 'streams');

/** A venue's recorded stream messages, as the text frames it sends (test/fixtures/streams). */
export function recordedStreamMessages(venue: string): string[] {
  const messages = JSON.parse(
    readFileSync(path.join(STREAMS, `${venue}.json`), 'utf8'),
  ) as unknown[];
  return messages.map((message) =>
    typeof message === 'string' ? message : JSON.stringify(message),
  );
}
