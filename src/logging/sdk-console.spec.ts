import { Logger, type LoggerService } from '@nestjs/common';
import { isSdkLine, routeSdkConsole } from './sdk-console.js';

/** Nest's logger as the app installs it, recording level, message and context (the last). */
class RecordingLogger implements LoggerService {
  readonly written: [string, unknown, unknown][] = [];

  log(message: unknown, ...params: unknown[]): void {
    this.written.push(['log', message, params.at(-1)]);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.written.push(['warn', message, params.at(-1)]);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.written.push(['error', message, params.at(-1)]);
  }
}

describe('routeSdkConsole', () => {
  const logger = new RecordingLogger();
  const printed: unknown[][] = [];
  const original = { log: console.log, warn: console.warn, error: console.error };

  beforeAll(() => {
    console.log = (...args: unknown[]) => printed.push(['log', ...args]);
    console.warn = (...args: unknown[]) => printed.push(['warn', ...args]);
    console.error = (...args: unknown[]) => printed.push(['error', ...args]);
    Logger.overrideLogger(logger);
    routeSdkConsole();
    // once per process: a second app does not wrap the wrappers
    routeSdkConsole();
  });

  afterAll(() => {
    Object.assign(console, original);
    Logger.overrideLogger(true);
  });

  beforeEach(() => {
    logger.written.length = 0;
    printed.length = 0;
  });

  it("logs the SDK's facilitator warning at warn, as one line without its URL", () => {
    console.warn(
      'Failed to fetch supported kinds from facilitator: Error: connect ECONNREFUSED https://key-123@facilitator.example/x\n[Nest] forged',
    );
    expect(printed).toEqual([]);
    expect(logger.written).toEqual([
      [
        'warn',
        'Failed to fetch supported kinds from facilitator: Error: connect ECONNREFUSED <url> [Nest] forged',
        'x402',
      ],
    ]);
  });

  it("keeps each of the SDK's levels, an error argument given by its message", () => {
    console.error('[offer-receipt] Failed to sign receipt:', new Error('no key'));
    console.log('[x402] extension responses: {}');
    expect(logger.written).toEqual([
      ['error', '[offer-receipt] Failed to sign receipt: no key', 'x402'],
      ['log', '[x402] extension responses: {}', 'x402'],
    ]);
  });

  it('leaves every other console call as it was', () => {
    console.warn('something else', 1);
    console.error(new Error('not the SDK'));
    console.log('x402 is a protocol');
    expect(logger.written).toEqual([]);
    expect(printed).toEqual([
      ['warn', 'something else', 1],
      ['error', new Error('not the SDK')],
      ['log', 'x402 is a protocol'],
    ]);
  });
});

describe('isSdkLine', () => {
  it.each([
    ['[x402] Resource server hook threw', true],
    ['x402: Route "/v1" has an invalid bazaar extension', true],
    ['V2 discovery extension extraction failed: boom', true],
    ['Failed to decode PAYMENT-SIGNATURE header:', true],
    ['Failed to fetch something else', false],
  ])('%j: %s', (line, expected) => {
    expect(isSdkLine([line])).toBe(expected);
  });

  it('takes only a line whose first argument is text', () => {
    expect(isSdkLine([{ message: '[x402]' }])).toBe(false);
    expect(isSdkLine([])).toBe(false);
  });
});
