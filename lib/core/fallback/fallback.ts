import { PolicyConfigError } from '../errors.js';
import type { StopReason } from '../events/call-events.js';
import { checkOptions, given } from '../rules/value-rule.js';

/** What a fallback is told about the call it stands in for. */
export interface FallbackStop {
  /** Why the call stopped without a value of its own (`limited`, `attemptsExhausted`, `deadlineExceeded`, …). */
  readonly reason: StopReason;
  /**
   * What the call would have rejected with: the last attempt's error, a `CallRejectedError` for a
   * refusal, a `DeadlineExceededError`; `undefined` when the last attempt returned a value its
   * classifier rejected (that value is in `value`).
   */
  readonly error: unknown;
  /** The last value a classifier rejected (a returned 503 response), else `undefined`. */
  readonly value: unknown;
  /** Attempts the call made (0 when it was refused before its first). */
  readonly attempts: number;
  /**
   * Aborted when the call's deadline passes (already aborted when the call stopped for it: no time is
   * left) or the caller's signal aborts while the fallback runs: pass it to whatever the fallback
   * waits on. The call does not wait past either (see {@link Fallback}).
   */
  readonly signal: AbortSignal;
}

/** The stand-in: returns (or resolves to) the call's value. */
export type FallbackFunction<T = unknown> = (stop: FallbackStop) => T | PromiseLike<T>;

/**
 * The stop reasons a fallback answers unless told otherwise: refusals by a guard of this process
 * (breaker, budget, limiter, quota), attempts used up on failures worth retrying (and a retryable
 * failure of a request not safe to repeat), and the deadline. Never a Permanent answer (a 404 stays a
 * 404), a caller's cancellation or a drain — list those in `on` to have them answered too.
 */
export const FALLBACK_REASONS: readonly StopReason[] = Object.freeze([
  'attemptsExhausted',
  'notRepeatable',
  'deadlineExceeded',
  'budgetExhausted',
  'dependencyUnavailable',
  'limited',
]);

const ALL_REASONS: readonly StopReason[] = [
  ...FALLBACK_REASONS,
  'permanent',
  'cancelled',
  'draining',
];

/** Options of {@link Fallback.to}. */
export interface FallbackOptions {
  /**
   * The stop reasons it answers, replacing the default {@link FALLBACK_REASONS}; add `'permanent'` to
   * answer a Permanent verdict too (`on: [...FALLBACK_REASONS, 'permanent']`). Non-empty.
   */
  readonly on?: readonly StopReason[];
}

/**
 * A policy's `fallback` option (DESIGN §3.8): when a call stops without a value of its own for one
 * of the reasons in `on`, its outcome is what `fn(stop)` returns or resolves to. A fallback that
 * throws rejects the call with its own error, the original set as its `cause` when it has none.
 * The call's deadline bounds its fallback too: a promise still pending when the deadline passes is
 * left and the call rejects with a `DeadlineExceededError` (the call's own when it stopped for the
 * deadline — its fallback then serves only what it has at hand, a value or a promise that settles
 * without waiting on a timer or I/O — else a new one, the call's error as its `cause`); the caller's
 * abort while it runs rejects with the signal's reason. `stop.signal` aborts at either.
 * The call still ends with one terminal event (its kind and stop reason, `fallback: 'served'` or
 * `'failed'`).
 * `fallback` is code: config cannot name one.
 */
export class Fallback {
  private constructor(
    /** The stand-in. */
    readonly fn: FallbackFunction,
    /** The stop reasons it answers. */
    readonly on: ReadonlySet<StopReason>,
  ) {}

  /**
   * A fallback running `fn` for the reasons in `options.on` (default {@link FALLBACK_REASONS}).
   * @throws PolicyConfigError naming `fallback` when `fn` is not a function or `options` is not a plain
   *   object, `fallback.<key>` for an unknown option, `fallback.on` when `on` is empty or lists an
   *   unknown stop reason
   */
  static to<T>(fn: FallbackFunction<T>, options?: FallbackOptions): Fallback {
    if (typeof fn !== 'function')
      throw new PolicyConfigError(
        'fallback',
        fn,
        'must be a function (stop) => value, or Fallback.to(fn, { on })',
      );
    // `on` is checked below, where its rule names the reasons; any other key is a typo, refused.
    if (options !== undefined) checkOptions(options, { on: null }, 'fallback', 'fallback option');
    const on = given(options?.on, FALLBACK_REASONS);
    if (!Array.isArray(on) || on.length === 0 || !on.every((r) => ALL_REASONS.includes(r))) {
      throw new PolicyConfigError(
        'fallback.on',
        on,
        `must be a non-empty list of stop reasons (${ALL_REASONS.join(', ')})`,
      );
    }
    return new Fallback(fn as FallbackFunction, new Set(on));
  }

  /** `value` as a fallback: a `Fallback` stays itself, a function becomes `Fallback.to(fn)`. @throws PolicyConfigError */
  static from(value: Fallback | FallbackFunction): Fallback {
    return value instanceof Fallback ? value : Fallback.to(value);
  }

  /** Whether it answers a call that stopped for `reason`. */
  answers(reason: StopReason): boolean {
    return this.on.has(reason);
  }
}
