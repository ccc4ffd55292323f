import { SchedulerRegistry } from '@nestjs/schedule';
import { describeWithRedis, useRedis } from '../../test/support/redis-suite.js';
import { RedisPollingElection } from './polling-election.js';

describeWithRedis('RedisPollingElection', () => {
  const shared = useRedis();

  /** An election whose role changes are awaited one by one. */
  function candidate() {
    const scheduler = new SchedulerRegistry();
    const election = new RedisPollingElection(shared.client, scheduler);
    const roles: string[] = [];
    let wake: (() => void) | undefined;
    const changed = (role: string) => () => {
      roles.push(role);
      wake?.();
    };
    election.start(changed('lead'), changed('follow'));
    return {
      election,
      scheduler,
      roles,
      becomes: (count: number) =>
        new Promise<void>((resolve) => {
          if (roles.length >= count) resolve();
          else wake = resolve;
        }),
    };
  }

  it('elects one poller; another takes over when it dies, or at once when it hands over', async () => {
    const first = candidate();
    await first.becomes(1);
    const second = candidate();
    const third = candidate();
    expect(first.roles).toEqual(['lead']);
    // the renewals run on a timeout the scheduler lists, and stop with the election
    expect(first.scheduler.getTimeouts()).toEqual(['polling-election']);

    // dies without handing over: its key expires, and one of the others polls
    await first.election.stop(false);
    expect(first.scheduler.getTimeouts()).toEqual([]);
    await Promise.race([second.becomes(1), third.becomes(1)]);
    const [leader, other] = second.roles.length > 0 ? [second, third] : [third, second];
    expect(leader.roles).toEqual(['lead']);
    expect(other.roles).toEqual([]);

    // hands over on shutdown: the last one polls
    await leader.election.stop();
    await other.becomes(1);
    expect(other.roles).toEqual(['lead']);
    await other.election.stop();
  });
});
