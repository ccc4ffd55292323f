import { startSandbox, type Sandbox } from '../../scripts/sandbox.js';
import type { PriceWalk } from './price-walk.js';

/**
 * The sandbox (`npm run sandbox`) as the tests run it: its own chain and app on free loopback
 * ports, three fake venues, and the venue probe replaced so no test contacts a public host. Like
 * every stack it keeps its batch-settlement channels in a temporary directory of its own, so two
 * stacks (two suites running at once, or one suite's two stacks) never refuse each other's.
 * Its recorded prices stay as recorded unless a test gives a walk.
 */
export function startOfflineSandbox(stateFile: string, priceWalk?: PriceWalk): Promise<Sandbox> {
  return startSandbox({
    env: {
      PORT: '0',
      LOG_LEVEL: 'error',
      PRICE_REFRESH_MS: '50000',
      MARKETS: 'coinbase,kraken,bitstamp',
    },
    probe: () => Promise.resolve({ coinbase: false, kraken: false, bitstamp: false }),
    stateFile,
    ...(priceWalk === undefined ? {} : { priceWalk }),
  });
}
