import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SOLANA_DEVNET_CAIP2 } from '@x402/svm';
import { runClient } from '../scripts/client.js';
import { describeSandbox, type Sandbox } from '../scripts/sandbox.js';
import { startOfflineSandbox } from './support/offline-sandbox.js';
import { paymentRequiredOf } from './support/x402-payloads.js';

/** The local stack's Solana side: offered next to its chain, bought by the client's Solana buyer. */
describe('the sandbox on Solana (npm run client -- --network solana)', () => {
  let dir: string;
  let stateFile: string;
  let sandbox: Sandbox;

  async function client(argv: string[]): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runClient(argv, {
      stateFile,
      env: {},
      out: (text) => out.push(text),
      err: (text) => err.push(text),
    });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'sandbox-solana-'));
    stateFile = path.join(dir, '.sandbox.json');
    sandbox = await startOfflineSandbox(stateFile);
  });

  afterAll(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('offers its chain and its Solana VM in one 402, and prints the Solana buyer', async () => {
    expect(typeof sandbox.solana).not.toBe('string');
    const challenge = await fetch(`${sandbox.state.apiUrl}/v1/ticker/BTC`);
    expect(paymentRequiredOf(challenge).accepts.map((a) => a.network)).toContain(
      SOLANA_DEVNET_CAIP2,
    );
    const printed = describeSandbox(sandbox);
    expect(printed).toContain(sandbox.state.solana?.buyerAddress);
    expect(printed).toContain('npm run client -- --network solana ticker BTC');
  });

  it('the client buys with the sandbox Solana buyer, and without --network with the EVM one', async () => {
    const solana = await client(['--network', 'solana', 'ticker', 'BTC']);
    expect(solana.err).toBe('');
    expect(solana.code).toBe(0);
    expect(solana.out).toContain(`Solana buyer ${sandbox.state.solana?.buyerAddress}`);
    expect(solana.out).toContain(SOLANA_DEVNET_CAIP2);
    const evm = await client(['ticker', 'BTC']);
    expect(evm.code).toBe(0);
    expect(evm.out).toContain('eip155:84532');
  });

  it('refuses another --network', async () => {
    const wrong = await client(['--network', 'tron', 'ticker', 'BTC']);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain('--network takes solana');
  });
});
