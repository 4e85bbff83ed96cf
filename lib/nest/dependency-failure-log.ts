import { Logger } from '@nestjs/common';
import type { Clock } from '../core/index.js';
import type { DependencyFailure } from '../core/internal.js';

/** How long one warning about a (policy, dependency, cause) covers the answers after it, ms. */
export const DEPENDENCY_FAILURE_WINDOW_MS = 30_000;
/** Most (policy, dependency, cause) windows kept; beyond it the one opened longest ago goes. */
const MAXIMUM_WINDOWS = 256;

interface Window {
  until: number;
  /** Answers given since the last warning, not written. */
  quiet: number;
}

const ENDINGS: Record<DependencyFailure['ending'], string> = {
  attemptsExhausted: 'on every attempt allowed',
  notRepeatable: 'once, on a request not safe to send again',
  bodyNotReplayable: 'and its request body could not be sent again',
  resumeRefused: 'part-way through its answer, which could not be resumed',
  bodyBroken: 'part-way through its answer',
};

/**
 * The exception filter's record of the dependency failures it answered 502: one warning per (policy,
 * dependency, cause) and 30 s window, naming the dependency and the cause (`ECONNREFUSED`), with the
 * count of answers given since the previous warning; nothing in between, never a stack, so a dependency
 * that is down costs one line per window however many requests it fails. Written through Nest's
 * `Logger` with the policy's context (`NResilience.orders`), as the logging listener's records are.
 */
export class DependencyFailureLog {
  private readonly windows = new Map<string, Window>();
  private readonly loggers = new Map<string, Logger>();

  /** @param clock the time source of the windows (the module's clock) */
  constructor(private readonly clock: Clock) {}

  /** Counts one answer for `failure` (`status`: the HTTP status or gRPC code name answered), writing a warning when its window is over. */
  answered(failure: DependencyFailure, status: number | string): void {
    const key = `${failure.policy}\u0000${failure.dependency}\u0000${failure.cause}`;
    const now = this.clock.now();
    let window = this.windows.get(key);
    if (window !== undefined && now < window.until) {
      window.quiet++;
      return;
    }
    const quiet = window?.quiet ?? 0;
    if (window === undefined) {
      if (this.windows.size >= MAXIMUM_WINDOWS)
        this.windows.delete(this.windows.keys().next().value!);
      window = { until: 0, quiet: 0 };
    }
    // Re-inserted so the map stays in the order windows opened.
    this.windows.delete(key);
    this.windows.set(key, window);
    window.until = now + DEPENDENCY_FAILURE_WINDOW_MS;
    window.quiet = 0;
    const since =
      quiet > 0
        ? ` (${quiet} more ${quiet === 1 ? 'answer' : 'answers'} like it since the previous warning)`
        : '';
    this.loggerFor(failure.policy).warn(
      `[${failure.policy}] dependency ${failure.dependency} failed ${ENDINGS[failure.ending]}: ${failure.cause}; answered ${status}${since}`,
    );
  }

  private loggerFor(policy: string): Logger {
    let logger = this.loggers.get(policy);
    if (logger === undefined) {
      if (this.loggers.size >= MAXIMUM_WINDOWS) this.loggers.clear();
      logger = new Logger(`NResilience.${policy}`);
      this.loggers.set(policy, logger);
    }
    return logger;
  }
}
