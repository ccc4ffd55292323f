import { jest } from '@jest/globals';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import os from 'node:os';
import path from 'node:path';
import type { Channel } from '@x402/evm/batch-settlement/server';
import { CHANNEL_CONFIG } from '../../../test/support/payment-doubles.js';
import { LocalChannelStorage } from './local-channel-storage.js';

const ID = `0x${'ab'.repeat(32)}`;

function channel(charged: string): Channel {
  return {
    channelId: ID,
    channelConfig: CHANNEL_CONFIG,
    chargedCumulativeAmount: charged,
    signedMaxClaimable: charged,
    signature: `0x${'1b'.repeat(65)}`,
    balance: '100000',
    totalClaimed: '0',
    withdrawRequestedAt: 0,
    refundNonce: 0,
    lastRequestTimestamp: 0,
  };
}

const add = (amount: bigint) => (current: Channel | undefined) =>
  channel((BigInt(current?.chargedCumulativeAmount ?? '0') + amount).toString());

describe('LocalChannelStorage', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'channels-'));
  });

  it('applies concurrent updates of one channel one after another, each on the previous', async () => {
    const storage = new LocalChannelStorage(dir);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => storage.updateChannel(ID, add(2000n))),
    );
    expect(results.every((result) => result.status === 'updated')).toBe(true);
    expect((await storage.get(ID))?.chargedCumulativeAmount).toBe('100000');
    await storage.close();
  });

  it('appends every change to the journal before it counts, so a new process replays it', async () => {
    const first = new LocalChannelStorage(dir);
    await first.updateChannel(ID.toUpperCase().replace('0X', '0x'), add(4000n));
    const journal = readFileSync(path.join(dir, 'channels.journal'), 'utf8').trim().split('\n');
    expect(JSON.parse(journal.at(-1)!)).toEqual({ id: ID, channel: channel('4000') });
    await first.close();

    const second = new LocalChannelStorage(dir);
    expect(await second.list()).toEqual([channel('4000')]);
    expect(await second.updateChannel(ID, (current) => current)).toMatchObject({
      status: 'unchanged',
    });
    expect(await second.updateChannel(ID, () => undefined)).toMatchObject({ status: 'deleted' });
    await second.close();
    const third = new LocalChannelStorage(dir);
    expect(await third.get(ID)).toBeUndefined();
    await third.close();
  });

  it('commits concurrent changes of many channels in groups, each line once, and replays them all', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `0x${i.toString(16).padStart(64, '0')}`);
    const storage = new LocalChannelStorage(dir);
    await Promise.all(
      ids.flatMap((id) =>
        Array.from({ length: 5 }, () =>
          storage.updateChannel(id, (current) => ({ ...add(2000n)(current), channelId: id })),
        ),
      ),
    );
    const lines = readFileSync(path.join(dir, 'channels.journal'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(50);
    await storage.close();
    const restarted = new LocalChannelStorage(dir);
    const charged = (await restarted.list()).map((record) => record.chargedCumulativeAmount);
    expect(charged).toEqual(ids.map(() => '10000'));
    await restarted.close();
  });

  it("journals a charge (synced) but not a request's reservation, which dies with its process", async () => {
    const storage = new LocalChannelStorage(dir);
    await storage.updateChannel(ID, add(2000n));
    const reservation = { pendingId: 'a-uuid', signedMaxClaimable: '4000', expiresAt: 9e15 };
    await storage.updateChannel(ID, (current) => ({ ...current!, pendingRequest: reservation }));
    expect((await storage.get(ID))?.pendingRequest).toEqual(reservation);
    const journalLines = () =>
      readFileSync(path.join(dir, 'channels.journal'), 'utf8').trim().split('\n').length;
    expect(journalLines()).toBe(1);
    await storage.updateChannel(ID, (current) => ({
      ...add(2000n)(current),
      pendingRequest: undefined,
    }));
    expect(journalLines()).toBe(2);
    await storage.close();
    const restarted = new LocalChannelStorage(dir);
    expect(await restarted.get(ID)).toEqual(channel('4000'));
    await restarted.close();
  });

  it('skips a torn last line (a change that never counted) and takes over the SDK file storage records', async () => {
    mkdirSync(path.join(dir, 'server'));
    writeFileSync(path.join(dir, 'server', `${ID}.json`), JSON.stringify(channel('2000')));
    writeFileSync(
      path.join(dir, 'channels.journal'),
      `${JSON.stringify({ id: ID, channel: channel('4000') })}\n{"id":"${ID}","chan`,
    );
    const storage = new LocalChannelStorage(dir);
    expect((await storage.get(ID))?.chargedCumulativeAmount).toBe('4000');
    expect(existsSync(path.join(dir, 'server', `${ID}.json`))).toBe(false);
    await storage.close();
    const again = new LocalChannelStorage(dir);
    expect((await again.get(ID))?.chargedCumulativeAmount).toBe('4000');
    await again.close();
  });

  it('refuses a directory another storage or a live owner holds, and takes over one a dead or silent owner left', async () => {
    const ownerFile = path.join(dir, 'owner.pid');
    const owner = new LocalChannelStorage(dir);
    expect(() => new LocalChannelStorage(dir)).toThrow(/already used by this process/);
    await owner.close();

    writeFileSync(ownerFile, `${hostname()} ${process.ppid} token`);
    expect(() => new LocalChannelStorage(dir)).toThrow(/one process per data directory/);
    // another host sharing the volume (pids mean nothing there) while it keeps the file fresh
    writeFileSync(ownerFile, 'other-container 1 token');
    expect(() => new LocalChannelStorage(dir)).toThrow(/process 1 on other-container/);

    const minuteAgo = new Date(Date.now() - 60_000);
    utimesSync(ownerFile, minuteAgo, minuteAgo);
    const heir = new LocalChannelStorage(dir);
    expect(readFileSync(ownerFile, 'utf8')).toMatch(new RegExp(`^${hostname()} ${process.pid} `));
    await heir.close();

    writeFileSync(ownerFile, `${hostname()} 2147483646 token`);
    const afterCrash = new LocalChannelStorage(dir);
    await afterCrash.close();
  });

  it('stops recording once another process took the directory over, and leaves its owner file alone', async () => {
    jest.useFakeTimers();
    try {
      const stalled = new LocalChannelStorage(dir);
      await stalled.updateChannel(ID, add(2000n));
      const ownerFile = path.join(dir, 'owner.pid');
      writeFileSync(ownerFile, `${hostname()} ${process.pid} the-new-owner`);
      jest.advanceTimersByTime(5_000);
      await expect(stalled.updateChannel(ID, add(2000n))).rejects.toThrow(/took .* over/);
      expect((await stalled.get(ID))?.chargedCumulativeAmount).toBe('2000');
      await stalled.close();
      expect(readFileSync(ownerFile, 'utf8')).toContain('the-new-owner');
    } finally {
      jest.useRealTimers();
    }
  });
});
