import path from 'node:path';
import { startSandbox, type Sandbox } from '../../scripts/sandbox.js';

/**
 * The sandbox (`npm run sandbox`) as the tests run it: its own chain and app on free loopback
 * ports, three fake venues, and the venue probe replaced so no test contacts a public host. Its
 * batch-settlement channels are kept beside `stateFile` (the test's own directory): in the default
 * `data/batch-settlement` of the project, two suites running at once would refuse each other's.
 */
export function startOfflineSandbox(stateFile: string): Promise<Sandbox> {
  return startSandbox({
    env: {
      PORT: '0',
      LOG_LEVEL: 'error',
      PRICE_REFRESH_MS: '50000',
      MARKETS: 'coinbase,kraken,bitstamp',
      X402_BATCH_DATA_DIR: path.join(path.dirname(stateFile), 'batch-settlement'),
    },
    probe: () => Promise.resolve({ coinbase: false, kraken: false, bitstamp: false }),
    stateFile,
  });
}
