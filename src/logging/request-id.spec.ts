import type { IncomingMessage } from 'node:http';
import { requestIdOf } from './request-id.js';

describe('requestIdOf', () => {
  const withHeader = (value: string | string[] | undefined): IncomingMessage =>
    ({ headers: value === undefined ? {} : { 'x-request-id': value } }) as IncomingMessage;

  it("keeps the caller's plain X-Request-Id", () => {
    expect(requestIdOf(withHeader('3f2b-Trace.1:a_b'))).toBe('3f2b-Trace.1:a_b');
    expect(requestIdOf(withHeader(['first-1', 'second-2']))).toBe('first-1');
  });

  it.each([undefined, '', 'has space', 'new\nline', 'x'.repeat(129)])(
    'replaces %j with a new UUID',
    (value) => {
      expect(requestIdOf(withHeader(value))).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      );
    },
  );
});
