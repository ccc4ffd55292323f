import type { PriceStream } from './price-stream.js';
import { StreamRegistry } from './stream-registry.js';
import { SETTINGS } from '../../test/support/stream-fakes.js';

describe('StreamRegistry', () => {
  it('refuses past the per-instance limit (503) and the per-payer limit (429), and frees slots', () => {
    const registry = new StreamRegistry(SETTINGS);
    const one = registry.reserve();
    one.admit('0xa');
    const two = registry.reserve();
    two.admit('0xa');
    const three = registry.reserve();
    expect(() => {
      three.admit('0xa');
    }).toThrow(expect.objectContaining({ status: 429, code: 'stream_limit' }) as Error);
    three.admit('0xb');
    expect(() => registry.reserve()).toThrow(
      expect.objectContaining({ status: 503, code: 'stream_capacity' }) as Error,
    );
    one.release();
    one.release();
    const four = registry.reserve();
    four.admit('0xa');
    expect(() => registry.reserve()).toThrow(expect.objectContaining({ status: 503 }) as Error);
  });

  it('ends every open stream with `end` shutdown when the module closes', async () => {
    const registry = new StreamRegistry(SETTINGS);
    const ended: string[] = [];
    const stream = {
      id: 's1',
      end: (reason: string) => ended.push(reason),
      run: () => Promise.resolve(),
    } as unknown as PriceStream;
    registry.reserve().bind(stream);
    expect(registry.get('s1')).toBe(stream);
    await registry.onModuleDestroy();
    expect(ended).toEqual(['shutdown']);
    expect(() => registry.reserve()).toThrow(expect.objectContaining({ status: 503 }) as Error);
  });
});
