/**
 * `npm run bench:streams`: section 9 of `npm run bench` alone (bench/streams-section.ts), with
 * its own local chain and the product in a process of its own (bench/targets.ts, plain node).
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatePrivateKey } from 'viem/accounts';
import { startLocalChain, STRANDED_TRANSACTION_SWEEP_SECONDS } from '../test/support/chain.js';
import { streamsSection, type StreamTarget } from './streams-section.js';
import type { TargetMessage } from './targets.js';

function startProduct(env: Record<string, string>): Promise<StreamTarget> {
  const child = fork(fileURLToPath(new URL('./targets.js', import.meta.url)), ['product'], {
    env: { ...process.env, BENCH_TARGET: JSON.stringify({ kind: 'product', env }) },
    execArgv: [],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      reject(new Error(`the product exited with ${String(code)} before listening`));
    });
    child.on('message', (message: TargetMessage) => {
      if (message.type !== 'ready') return;
      resolve({
        url: message.url,
        usage: () =>
          new Promise((done) => {
            const onUsage = (reply: TargetMessage): void => {
              if (reply.type !== 'usage') return;
              child.off('message', onUsage);
              done(reply);
            };
            child.on('message', onUsage);
            child.send('usage');
          }),
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) {
              done();
              return;
            }
            child.once('exit', () => {
              done();
            });
            child.disconnect();
          }),
      });
    });
  });
}

const chain = await startLocalChain({ intervalMiningSeconds: STRANDED_TRANSACTION_SWEEP_SECONDS });
const channels = mkdtempSync(path.join(os.tmpdir(), 'x402-bench-streams-'));
try {
  const [settler, payTo] = chain.accounts;
  if (settler === undefined || payTo === undefined) throw new Error('anvil listed no dev keys');
  const { privateKeyToAccount } = await import('viem/accounts');
  const lines = await streamsSection({
    chain,
    startProduct,
    productEnv: {
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      X402_FACILITATOR: 'embedded',
      X402_NETWORK: 'base-sepolia',
      X402_SCHEMES: 'exact,batch-settlement',
      X402_PAY_TO: privateKeyToAccount(payTo).address,
      X402_SETTLER_PRIVATE_KEY: settler,
      X402_RPC_URL: chain.rpcUrl,
      X402_RECEIPT_POLL_MS: '50',
      ATTESTATION_PRIVATE_KEY: generatePrivateKey(),
      RATE_LIMIT_FREE: '0',
      RATE_LIMIT_UNPAID: '0',
      X402_BATCH_SETTLE_INTERVAL_MS: '1000',
      X402_BATCH_DATA_DIR: channels,
    },
  });
  console.log(lines.join('\n'));
} finally {
  await chain.stop();
  rmSync(channels, { recursive: true, force: true });
}
