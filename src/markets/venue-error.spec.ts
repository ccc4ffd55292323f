import { VenueError } from './venue-error.js';

describe('VenueError', () => {
  it('keeps its message as remote text: one line, no URL', () => {
    const error = new VenueError('network', 'line one\nfetch https://mirror.example/api failed');
    expect(error.message).toBe('line one fetch <url> failed');
  });
});
