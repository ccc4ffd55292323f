import { SchedulerRegistry } from '@nestjs/schedule';
import { BackgroundTimeout, ScheduledTimeout } from './timeout-slot.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ScheduledTimeout', () => {
  it('is listed under its name while pending, and unlisted once it has fired', async () => {
    const registry = new SchedulerRegistry();
    const timeout = new ScheduledTimeout(registry, 'venue-poll:test');
    const calls: string[] = [];
    timeout.set(5, () => calls.push('fired'));
    expect(registry.getTimeouts()).toEqual(['venue-poll:test']);
    expect(timeout.pending).toBe(true);
    await sleep(20);
    expect(calls).toEqual(['fired']);
    expect(registry.getTimeouts()).toEqual([]);
    expect(timeout.pending).toBe(false);
  });

  it('replaces the pending call when set again, and calls nothing once cleared', async () => {
    const registry = new SchedulerRegistry();
    const timeout = new ScheduledTimeout(registry, 'aggregation');
    const calls: string[] = [];
    timeout.set(5, () => calls.push('first'));
    timeout.set(10, () => calls.push('second'));
    await sleep(30);
    expect(calls).toEqual(['second']);
    timeout.set(5, () => calls.push('third'));
    timeout.clear();
    await sleep(20);
    expect(calls).toEqual(['second']);
    expect(registry.getTimeouts()).toEqual([]);
  });

  it('can be set again from its own callback', async () => {
    const registry = new SchedulerRegistry();
    const timeout = new ScheduledTimeout(registry, 'again');
    let calls = 0;
    const tick = (): void => {
      calls += 1;
      if (calls < 3) timeout.set(1, tick);
    };
    timeout.set(1, tick);
    await sleep(40);
    expect(calls).toBe(3);
    expect(timeout.pending).toBe(false);
  });

  it('stays usable after the scheduler cleared it at shutdown', async () => {
    const registry = new SchedulerRegistry();
    const timeout = new ScheduledTimeout(registry, 'shutdown');
    const calls: string[] = [];
    timeout.set(5, () => calls.push('cleared'));
    registry.deleteTimeout('shutdown');
    expect(timeout.pending).toBe(false);
    timeout.clear();
    timeout.set(5, () => calls.push('set again'));
    await sleep(20);
    expect(calls).toEqual(['set again']);
  });

  it('refuses a name already taken in the registry', () => {
    const registry = new SchedulerRegistry();
    new ScheduledTimeout(registry, 'taken').set(1000, () => undefined);
    expect(() => {
      new ScheduledTimeout(registry, 'taken').set(1000, () => undefined);
    }).toThrow(/taken/);
    registry.deleteTimeout('taken');
  });
});

describe('BackgroundTimeout', () => {
  it('fires once, and not after being cleared', async () => {
    const timeout = new BackgroundTimeout();
    const calls: string[] = [];
    timeout.set(5, () => calls.push('fired'));
    expect(timeout.pending).toBe(true);
    await sleep(20);
    expect(timeout.pending).toBe(false);
    timeout.set(5, () => calls.push('cleared'));
    timeout.clear();
    await sleep(20);
    expect(calls).toEqual(['fired']);
  });
});
