import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalChain, type LocalChain } from './support/chain.js';

/** Far past anvil's in-memory window of states: 1,000 blocks made it write ~80 MB to disk. */
const BLOCKS = 1_000;

describe('the local chain', () => {
  const savedHome = process.env.HOME;
  let home: string;
  let chain: LocalChain;

  beforeAll(async () => {
    // anvil keeps its persisted states under $HOME/.foundry/anvil/tmp; give it a home of its own
    home = mkdtempSync(join(tmpdir(), 'anvil-home-'));
    process.env.HOME = home;
    chain = await startLocalChain();
  });

  afterAll(async () => {
    await chain.stop();
    if (savedHome === undefined) delete process.env.HOME;
    else process.env.HOME = savedHome;
    rmSync(home, { recursive: true, force: true });
  });

  it('leaves nothing on disk, however long it runs and however it is stopped', async () => {
    await rpc(chain.rpcUrl, 'anvil_mine', [`0x${BLOCKS.toString(16)}`]);
    await rpc(chain.rpcUrl, 'evm_mine', []);
    expect(await chain.publicClient.getBlockNumber()).toBeGreaterThan(BigInt(BLOCKS));

    // stop() kills anvil with SIGKILL, so anvil's own clean-up on exit never runs
    await chain.stop();
    expect(entriesOf(join(home, '.foundry', 'anvil', 'tmp'))).toEqual([]);
  });
});

async function rpc(rpcUrl: string, method: string, params: unknown[]): Promise<void> {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { error?: unknown };
  expect(body.error).toBeUndefined();
}

function entriesOf(directory: string): string[] {
  try {
    return readdirSync(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
