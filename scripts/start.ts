/**
 * `npm start`: with X402_PAY_TO set, the service selling for real (dist/src/main.js, as the
 * container runs it). Without it, the local stack of
 * `npm run sandbox` (test chain, test USDC, embedded facilitator, funded buyer for
 * `npm run client`), so a fresh clone answers at once; never in production, where a missing
 * X402_PAY_TO stops start-up.
 */
import { existsSync } from 'node:fs';
import { isEntryPoint } from './entry-point.js';

export type StartPlan =
  | { readonly kind: 'service' }
  | { readonly kind: 'local' }
  | { readonly kind: 'refuse'; readonly message: string };

/** What `npm start` runs for this environment (.env already loaded). */
export function planStart(env: Readonly<Record<string, string | undefined>>): StartPlan {
  if ((env['X402_PAY_TO'] ?? '').trim() !== '') return { kind: 'service' };
  if (env['NODE_ENV'] === 'production') {
    return {
      kind: 'refuse',
      message:
        'Cannot start: X402_PAY_TO is required with NODE_ENV=production (the address that receives ' +
        'payments). Set it in the environment or .env; the local test stack never runs in production.',
    };
  }
  return { kind: 'local' };
}

/** What the service runs, as the container does: tsc's output, with plain node. */
export const SERVICE_SCRIPT = 'dist/src/main.js';

async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  const plan = planStart(process.env);
  switch (plan.kind) {
    case 'service':
      // from dist/scripts, up to the project
      await import(new URL(`../../${SERVICE_SCRIPT}`, import.meta.url).href);
      return;
    case 'refuse':
      console.error(plan.message);
      process.exit(1);
      return;
    case 'local': {
      console.log('X402_PAY_TO is not set: starting the local test stack (as `npm run sandbox`).');
      const { serveSandbox } = await import('./sandbox.js');
      await serveSandbox();
      return;
    }
  }
}

if (isEntryPoint(import.meta.url)) await main();
