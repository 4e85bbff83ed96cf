import { Logger } from '@nestjs/common';
import type { ReloadCounts, ReloadEvent, ReloadListener, ReloadTrigger } from './reload-event.js';
import type { PolicyInstrumentation } from './resilience-instrumentation.js';

/**
 * Tells of a registry's reloads, applied or refused: counts them, logs them (context
 * `NResilience.config`, where the policies' own logs go: nowhere when logging is off or not
 * attached), counts them in OpenTelemetry, and calls the registry's reload listeners. @internal
 */
export class ReloadReporter {
  private readonly listeners = new Set<ReloadListener>();
  private counts: ReloadCounts = { reloaded: 0, reloadFailed: 0 };
  private logger: Logger | undefined;

  /** @param instrumentation the module's telemetry and logging, `undefined` for none */
  constructor(private readonly instrumentation: PolicyInstrumentation | undefined) {}

  /** Reloads applied and refused since start-up. */
  get reloadCounts(): ReloadCounts {
    return this.counts;
  }

  /** Adds `listener`; returns the function that removes it. */
  add(listener: ReloadListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** A reload was applied: counted, logged at `log`, reported; `names` are the policies now in force. */
  applied(trigger: ReloadTrigger, names: readonly string[]): void {
    this.counts = { ...this.counts, reloaded: this.counts.reloaded + 1 };
    this.log()?.log(`config reloaded (${trigger}): ${names.join(', ')}`);
    this.emit({ kind: 'reloaded', trigger, error: undefined, names });
  }

  /** A reload was refused: counted, logged once at `warn`, reported; `names` are the policies still in force. */
  refused(trigger: ReloadTrigger, error: Error, names: readonly string[]): void {
    this.counts = { ...this.counts, reloadFailed: this.counts.reloadFailed + 1 };
    this.log()?.warn(
      `config reload (${trigger}) refused, the previous config stays in force: ${error.message}`,
    );
    this.emit({ kind: 'reloadFailed', trigger, error, names });
  }

  private emit(event: ReloadEvent): void {
    this.instrumentation?.recordReload(event.kind);
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A listener must not decide whether a reload happened.
      }
    }
  }

  private log(): Logger | undefined {
    return this.instrumentation?.logging === undefined
      ? undefined
      : (this.logger ??= new Logger('NResilience.config'));
  }
}
