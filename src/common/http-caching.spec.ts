import { entityTag, matches } from './http-caching.js';

describe('entityTag', () => {
  it('is a strong quoted tag that depends on every byte', () => {
    const tag = entityTag('{"count":1}');
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(entityTag('{"count":1}')).toBe(tag);
    expect(entityTag(Buffer.from('{"count":1}'))).toBe(tag);
    expect(entityTag('{"count":2}')).not.toBe(tag);
  });
});

describe('matches (If-None-Match)', () => {
  const tag = '"abc"';

  it.each([
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", "abc"', true],
    ['"x",W/"abc" ', true],
    ['*', true],
    ['"abcd"', false],
    ['abc', false],
    ['', false],
  ])('%j → %s', (header, expected) => {
    expect(matches(header, tag)).toBe(expected);
  });

  it('is false without the header', () => {
    expect(matches(undefined, tag)).toBe(false);
  });
});
