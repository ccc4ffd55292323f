import type { SchedulerRegistry } from '@nestjs/schedule';

/** One pending call at most: setting it again replaces the call still pending. */
export interface TimeoutSlot {
  set(delayMs: number, callback: () => void): void;
  clear(): void;
  readonly pending: boolean;
}

/**
 * A TimeoutSlot listed in Nest's SchedulerRegistry under a name unique within the application,
 * so the scheduler lists it while pending and clears it when the application shuts down.
 */
export class ScheduledTimeout implements TimeoutSlot {
  private handle: NodeJS.Timeout | undefined;

  constructor(
    private readonly registry: SchedulerRegistry,
    readonly name: string,
    /** `unref`: the pending call does not keep the process alive. */
    private readonly options: { readonly unref?: boolean } = {},
  ) {}

  /** False once it has fired, been cleared, or been cleared by the scheduler at shutdown. */
  get pending(): boolean {
    return (
      this.handle !== undefined &&
      this.registry.doesExist('timeout', this.name) &&
      this.registry.getTimeout<NodeJS.Timeout>(this.name) === this.handle
    );
  }

  set(delayMs: number, callback: () => void): void {
    this.clear();
    const handle = setTimeout(() => {
      this.clear();
      callback();
    }, delayMs);
    if (this.options.unref === true) handle.unref();
    this.registry.addTimeout(this.name, handle);
    this.handle = handle;
  }

  clear(): void {
    if (this.pending) this.registry.deleteTimeout(this.name);
    this.handle = undefined;
  }
}

/** A TimeoutSlot on a plain timer that does not keep the process alive, for background upkeep. */
export class BackgroundTimeout implements TimeoutSlot {
  private handle: NodeJS.Timeout | undefined;

  get pending(): boolean {
    return this.handle !== undefined;
  }

  set(delayMs: number, callback: () => void): void {
    this.clear();
    this.handle = setTimeout(() => {
      this.handle = undefined;
      callback();
    }, delayMs);
    this.handle.unref();
  }

  clear(): void {
    clearTimeout(this.handle);
    this.handle = undefined;
  }
}
