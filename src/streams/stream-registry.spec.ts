import type { PriceStream } from './price-stream.js';
import { StreamRegistry } from './stream-registry.js';
import { SETTINGS } from '../../test/support/stream-fakes.js';

describe('StreamRegistry', () => {
  it('refuses past the per-instance limit (503) and the per-payer limit (429), and frees slots', () => {
    const registry = new StreamRegistry(SETTINGS);
    const one = registry.reserve('10.0.0.1');
    one.admit('0xa');
    const two = registry.reserve('10.0.0.1');
    two.admit('0xa');
    const three = registry.reserve('10.0.0.1');
    expect(() => {
      three.admit('0xa');
    }).toThrow(expect.objectContaining({ status: 429, code: 'stream_limit' }) as Error);
    three.admit('0xb');
    expect(() => registry.reserve('10.0.0.1')).toThrow(
      expect.objectContaining({ status: 503, code: 'stream_capacity' }) as Error,
    );
    one.release();
    one.release();
    const four = registry.reserve('10.0.0.1');
    four.admit('0xa');
    expect(() => registry.reserve('10.0.0.1')).toThrow(
      expect.objectContaining({ status: 503 }) as Error,
    );
  });

  it('refuses a client address past its limit (429) and counts it again once its streams end', () => {
    const registry = new StreamRegistry({ ...SETTINGS, perInstance: 10, perClient: 2 });
    const one = registry.reserve('10.0.0.1');
    registry.reserve('10.0.0.1');
    expect(() => registry.reserve('10.0.0.1')).toThrow(
      expect.objectContaining({ status: 429, code: 'stream_limit' }) as Error,
    );
    // another address is not limited by the first one's streams
    registry.reserve('10.0.0.2').admit('0xb');
    one.release();
    one.release();
    const again = registry.reserve('10.0.0.1');
    expect(() => registry.reserve('10.0.0.1')).toThrow(
      expect.objectContaining({ status: 429 }) as Error,
    );
    again.release();
    registry.reserve('10.0.0.1');
  });

  it('ends every open stream with `end` shutdown when the module closes', async () => {
    const registry = new StreamRegistry(SETTINGS);
    const ended: string[] = [];
    const stream = {
      id: 's1',
      end: (reason: string) => ended.push(reason),
      run: () => Promise.resolve(),
    } as unknown as PriceStream;
    registry.reserve('10.0.0.1').bind(stream);
    expect(registry.get('s1')).toBe(stream);
    await registry.onModuleDestroy();
    expect(ended).toEqual(['shutdown']);
    expect(() => registry.reserve('10.0.0.1')).toThrow(
      expect.objectContaining({ status: 503 }) as Error,
    );
  });
});
