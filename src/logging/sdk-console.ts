/**
 * The x402 SDK's own console lines (`@x402/core`, `@x402/evm`, `@x402/extensions` take no logger
 * and call `console.log/warn/error`), routed to the app's logger so that LOG_LEVEL and LOG_FORMAT
 * apply to them. Only lines that begin as the SDK's do are taken; every other console call is
 * left as it was.
 */
import { Logger } from '@nestjs/common';
import { remoteText } from '../common/remote-text.js';

/** How the SDK's console lines begin. */
const SDK_LINE =
  /^(\[x402\]|x402: |\[offer-receipt\]|Failed to fetch supported kinds from facilitator|Failed to decode PAYMENT-SIGNATURE header|V2 discovery extension (validation|extraction) failed)/;

/** The console methods the SDK writes with, and the level each line is logged at. */
const ROUTED_METHODS = ['log', 'warn', 'error'] as const;

const sdkLogger = new Logger('x402');
let routed = false;

/** Whether `args` is one of the SDK's console lines. */
export function isSdkLine(args: readonly unknown[]): boolean {
  const [first] = args;
  return typeof first === 'string' && SDK_LINE.test(first);
}

/**
 * Routes the SDK's console lines to Nest's logger under the context `x402`, once per process. Their
 * text goes through remoteText: they quote facilitators' errors, URLs included.
 */
export function routeSdkConsole(): void {
  if (routed) return;
  routed = true;
  for (const method of ROUTED_METHODS) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]): void => {
      if (isSdkLine(args)) sdkLogger[method](sdkText(args));
      else original(...args);
    };
  }
}

/** The line's arguments as one printable text, as console would join them. */
function sdkText(args: readonly unknown[]): string {
  return remoteText(args.map((arg) => (typeof arg === 'string' ? arg : remoteText(arg))).join(' '));
}
