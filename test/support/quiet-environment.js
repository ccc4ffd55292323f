/**
 * Jest's node environment, with what a test prints held back until the test's outcome is known:
 * the lines of a test that passes are dropped, those of a test or hook that fails are printed
 * after it. Many tests provoke an error on purpose, and the app logs it (Nest's logger writes to
 * process.stdout and process.stderr, the x402 SDK to console); printed, those lines would read as
 * failures in a run that passed. TEST_LOG=1 prints everything as it comes (and lets the apps that
 * tests start log: test/support/test-app.ts).
 *
 * Held back: writes to the test's `process.stdout` / `process.stderr` and its console's printing
 * methods. Not held back: what child processes and pino's file-descriptor destination write.
 */
import process from 'node:process';
import { format } from 'node:util';
import NodeEnvironment from 'jest-environment-node';

const CONSOLE_METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'];

export default class QuietEnvironment extends NodeEnvironment {
  /** What was printed since the last test ended, as calls that print it. */
  held = [];
  /** Whether a test of this file ended yet: a file that failed to load has its lines printed. */
  testEnded = false;
  failed = false;
  /** Whether console calls are held too (not under TEST_LOG=1). */
  quietConsole = false;

  constructor(config, context) {
    super(config, context);
    if (process.env['TEST_LOG'] === '1') return;
    const vmProcess = this.global.process;
    for (const name of ['stdout', 'stderr']) {
      const real = vmProcess[name];
      // the real stream underneath, so TTY checks, `fd` and listeners behave as they do
      const held = Object.create(real);
      held.write = (chunk, encoding, callback) => {
        const text = typeof encoding === 'string' ? encoding : undefined;
        this.held.push(() => real.write(chunk, text));
        const done = typeof encoding === 'function' ? encoding : callback;
        if (typeof done === 'function') process.nextTick(done);
        return true;
      };
      Object.defineProperty(vmProcess, name, { value: held, configurable: true, writable: true });
    }
    this.quietConsole = true;
  }

  async setup() {
    await super.setup();
    // jest installs the test's console after constructing the environment, before setup
    if (!this.quietConsole) return;
    const held = Object.create(this.global.console);
    for (const method of CONSOLE_METHODS) {
      held[method] = (...args) => {
        // formatted now: an object logged may change before it is printed
        const text = `console.${method}: ${format(...args)}\n`;
        this.held.push(() => process.stderr.write(text));
      };
    }
    this.global.console = held;
  }

  /** Prints what was held, under a heading that says whose it is. */
  release(whose) {
    if (this.held.length === 0) return;
    const printed = this.held;
    this.held = [];
    process.stderr.write(`\n--- printed during ${whose} ---\n`);
    for (const print of printed) print();
    process.stderr.write(`--- end of ${whose} ---\n`);
  }

  async handleTestEvent(event) {
    if (event.name === 'test_done') {
      this.testEnded = true;
      if (event.test.errors.length > 0) {
        this.failed = true;
        this.release(`failing test "${fullName(event.test)}"`);
      } else {
        this.held = [];
      }
    } else if (event.name === 'hook_failure') {
      this.failed = true;
      this.release(`failing ${event.hook.type} hook`);
    }
  }

  async teardown() {
    if (this.failed || !this.testEnded) this.release('the test file');
    this.held = [];
    await super.teardown();
  }
}

function fullName(test) {
  const names = [];
  for (let block = test; block !== undefined && block.parent !== undefined; block = block.parent) {
    names.unshift(block.name);
  }
  return names.join(' › ');
}
