import { Logger } from '@nestjs/common';
import { remoteText } from '../common/remote-text.js';

/** How the x402 SDK's own console lines begin (@x402/core, @x402/evm, @x402/extensions). */
const SDK_LINE =
  /^(\[x402\]|x402: |\[offer-receipt\]|Failed to fetch supported kinds from facilitator|Failed to decode PAYMENT-SIGNATURE header|V2 discovery extension validation failed)/;

const ROUTED = { log: 'log', warn: 'warn', error: 'error' } as const;

const sdkLogger = new Logger('x402');
let routed = false;

/**
 * The x402 SDK reports through `console` and takes no logger: its lines, recognised by how they
 * begin, go to the app's logger instead (LOG_LEVEL and LOG_FORMAT applied, context `x402`, the
 * text through remoteText: it quotes facilitators' errors). Every other console call is untouched.
 */
export function routeSdkConsole(): void {
  if (routed) return;
  routed = true;
  for (const [method, level] of Object.entries(ROUTED) as [
    keyof typeof ROUTED,
    'log' | 'warn' | 'error',
  ][]) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]): void => {
      const [first] = args;
      if (typeof first === 'string' && SDK_LINE.test(first)) sdkLogger[level](sdkText(args));
      else original(...args);
    };
  }
}

function sdkText(args: readonly unknown[]): string {
  return remoteText(args.map((arg) => (typeof arg === 'string' ? arg : remoteText(arg))).join(' '));
}
