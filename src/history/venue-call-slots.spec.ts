import { VenueCallSlots, VenueCallsBusy } from './venue-call-slots.js';

/** A call that stays in flight until the test lets it answer. */
function pendingCall(): { call: () => Promise<string>; answer: (value: string) => void } {
  let answer: (value: string) => void = () => undefined;
  const promise = new Promise<string>((resolve) => {
    answer = resolve;
  });
  return { call: () => promise, answer };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('VenueCallSlots', () => {
  it('keeps at most `limit` calls in flight; the others start in order as slots free', async () => {
    const slots = new VenueCallSlots(2, 5_000);
    const calls = Array.from({ length: 5 }, () => pendingCall());
    const started: number[] = [];
    const results = calls.map((pending, index) =>
      slots.run(() => {
        started.push(index);
        return pending.call();
      }),
    );
    await tick();
    expect(started).toEqual([0, 1]);
    expect(slots.inFlight).toBe(2);
    calls[1]?.answer('b');
    await tick();
    expect(started).toEqual([0, 1, 2]);
    expect(slots.inFlight).toBe(2);
    for (const pending of calls) pending.answer('x');
    await expect(Promise.all(results)).resolves.toEqual(['x', 'b', 'x', 'x', 'x']);
    expect(slots.inFlight).toBe(0);
  });

  it('a call that waits longer than `waitMs` fails as busy and is never made', async () => {
    const slots = new VenueCallSlots(1, 50);
    const first = pendingCall();
    const running = slots.run(first.call);
    let made = false;
    const waiting = slots.run(() => {
      made = true;
      return Promise.resolve('late');
    });
    await expect(waiting).rejects.toBeInstanceOf(VenueCallsBusy);
    first.answer('first');
    await expect(running).resolves.toBe('first');
    await tick();
    expect(made).toBe(false);
    // the slot it would have taken is free for the next call
    await expect(slots.run(() => Promise.resolve('next'))).resolves.toBe('next');
  });

  it('a failing call gives its slot back', async () => {
    const slots = new VenueCallSlots(1, 1_000);
    await expect(slots.run(() => Promise.reject(new Error('venue down')))).rejects.toThrow(
      'venue down',
    );
    expect(slots.inFlight).toBe(0);
    await expect(slots.run(() => Promise.resolve('ok'))).resolves.toBe('ok');
  });

  it('serves waiting clients in turn: one address queuing many calls delays another by one turn', async () => {
    const slots = new VenueCallSlots(1, 5_000);
    const started: string[] = [];
    const pending = new Map<string, ReturnType<typeof pendingCall>>();
    const ask = (client: string, name: string): Promise<string> => {
      const call = pendingCall();
      pending.set(name, call);
      return slots.run(() => {
        started.push(name);
        return call.call();
      }, client);
    };
    const results = [
      ...['a0', 'a1', 'a2', 'a3'].map((name) => ask('10.0.0.1', name)),
      ask('10.0.0.2', 'b0'),
      ask('10.0.0.3', 'c0'),
    ];
    for (const name of ['a0', 'a1', 'b0', 'c0', 'a2', 'a3']) {
      await tick();
      expect(started[started.length - 1]).toBe(name);
      pending.get(name)?.answer(name);
    }
    await expect(Promise.all(results)).resolves.toEqual(['a0', 'a1', 'a2', 'a3', 'b0', 'c0']);
    expect(slots.inFlight).toBe(0);
  });
});
