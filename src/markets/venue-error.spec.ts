import { MAX_VENUE_ERROR_LENGTH, VenueError, printableVenueText } from './venue-error.js';

describe('printableVenueText', () => {
  it('keeps ordinary text as it is', () => {
    expect(printableVenueText('HTTP 503')).toBe('HTTP 503');
  });

  it('puts line breaks, tabs and other control characters on one line', () => {
    expect(printableVenueText('a\nb\r\nc\td\u0000e\u2028f')).toBe('a b c d e f');
  });

  it('drops ANSI escape sequences', () => {
    expect(printableVenueText('\u001b[31mred\u001b[0m and \u001b[2Kcleared')).toBe(
      'red and cleared',
    );
  });

  it('removes credentials from URLs in the text', () => {
    expect(
      printableVenueText('fetch failed for https://bob:hunter2@mirror.example/api/v3/ticker'),
    ).toBe('fetch failed for https://mirror.example/api/v3/ticker');
  });

  it('caps the length and marks the cut', () => {
    const shown = printableVenueText('y'.repeat(1000));
    expect(shown).toHaveLength(MAX_VENUE_ERROR_LENGTH);
    expect(shown.endsWith('…')).toBe(true);
  });

  it('is applied to every VenueError message', () => {
    expect(new VenueError('network', 'line one\nline two').message).toBe('line one line two');
  });
});
