import { Drain } from '../core/index.js';
import type { ShutdownGrace } from './shutdown-grace.js';

/**
 * A registry's part in shutting down (DESIGN §4 "Shutdown"): the drain switch every policy it builds
 * stops retrying on, thrown once the module's shutdown grace (if any) has passed. @internal
 */
export class RegistryShutdown {
  /** The switch the registry's policies are built with. */
  readonly drain = new Drain();

  /** @param grace the module's shutdown grace, `undefined` outside Nest */
  constructor(private readonly grace: ShutdownGrace | undefined) {}

  /** Whether the policies are draining. */
  get draining(): boolean {
    return this.drain.draining;
  }

  /** Whether the application has begun shutting down (its first shutdown hook), or is draining. */
  get shuttingDown(): boolean {
    return this.grace?.shuttingDown === true || this.drain.draining;
  }

  /**
   * Drains now, or once the grace has passed for a SIGTERM with `shutdown: { grace }`.
   * @param signal the signal closing the application, as Nest passes it
   * @returns a promise settled once draining when there is a grace to wait for, else nothing
   */
  begin(signal?: string): Promise<void> | void {
    const grace = this.grace?.wait(signal);
    if (grace === undefined) this.drain.start();
    else return grace.then(() => this.drain.start());
  }
}
