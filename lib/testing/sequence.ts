import { type Clock, sleep, SystemClock } from '../core/index.js';
import { checkClock, checkDuration, checkTimes } from './option-checks.js';
import { ScriptQueue } from './script-queue.js';

/** Options of {@link Sequence.for}. */
export interface SequenceOptions {
  /**
   * The clock scripted delays wait on. Pass the same `FakeClock` the policy uses; otherwise a scripted
   * delay is a real sleep on `SystemClock.instance` (the default).
   */
  readonly clock?: Clock;
}

/**
 * What {@link Sequence.next} reads from its argument: the attempt context a policy hands its callback
 * (`{ signal, attempt }`) fits, so `policy.run((ctx) => seq.next(ctx))` works as is.
 */
export interface SequenceCallContext {
  /** Cancels a scripted delay; read only when the step has a delay. */
  readonly signal?: AbortSignal;
}

type Outcome<T> =
  | { readonly kind: 'returns'; readonly value: T }
  | { readonly kind: 'throws'; readonly error: unknown };

interface Step<T> {
  readonly outcome: Outcome<T>;
  /** Milliseconds to wait before settling. */
  readonly delay: number;
}

/** A run of `count` future outcomes that will each wait `ms` first. */
interface PendingDelay {
  ms: number;
  count: number;
}

/**
 * A scripted dependency: each call to {@link Sequence.next} plays the next step of a script of returns,
 * throws and delays, so a test states exactly what the dependency does on call 1, 2, 3…
 *
 * ```ts
 * const clock = new FakeClock();
 * const seq = Sequence.for<string>({ clock })
 *   .throws(new Error('connection reset'), 2) // calls 1 and 2 fail
 *   .delays(2_000)                            // call 3 waits 2 s on the clock…
 *   .returns('ok');                           // …then answers 'ok' (and so does every later call)
 * const call = Resilience.default.with({ clock }).run((ctx) => seq.next(ctx));
 * ```
 *
 * Script rules:
 * - `returns` and `throws` add outcome steps; each call consumes one outcome.
 * - `delays(ms, times)` is not a call of its own: it makes each of the next `times` outcomes added
 *   after it wait `ms` more before settling. So `.delays(100).returns(v)` is one call that waits
 *   100 ms then resolves `v`; `.delays(100).delays(50).returns(v)` waits 150 ms; and
 *   `.delays(100, 3).returns(v, 3)` is three calls that each wait 100 ms.
 * - When the script is used up, its last outcome step (with its delay) repeats for every later call.
 * - `next()` on an empty script, or on one ending in `delays` not followed by an outcome, rejects with
 *   an `Error` explaining the mistake (and counts the call).
 */
export class Sequence<T> {
  private readonly script = new ScriptQueue<Step<T>>();
  private pending: PendingDelay[] = [];
  private calls = 0;

  private constructor(private readonly clock: Clock) {}

  /**
   * Starts an empty script.
   * @param options `clock`: the clock scripted delays wait on (default `SystemClock.instance`: real
   *   time — pass your test's `FakeClock`).
   * @throws PolicyConfigError when `clock` is not a Clock.
   */
  static for<T>(options: SequenceOptions = {}): Sequence<T> {
    const clock = options.clock ?? SystemClock.instance;
    checkClock('clock', clock);
    return new Sequence<T>(clock);
  }

  /**
   * Adds `times` calls that reject with `error` (the same value each time).
   * @param error what the call rejects with
   * @param times how many consecutive calls (integer >= 1, default 1)
   * @throws PolicyConfigError when `times` is not an integer >= 1.
   */
  throws(error: unknown, times = 1): this {
    return this.add({ kind: 'throws', error }, checkTimes('times', times));
  }

  /**
   * Adds `times` calls that resolve with `value`.
   * @param value what the call resolves with
   * @param times how many consecutive calls (integer >= 1, default 1)
   * @throws PolicyConfigError when `times` is not an integer >= 1.
   */
  returns(value: T, times = 1): this {
    return this.add({ kind: 'returns', value }, checkTimes('times', times));
  }

  /**
   * Makes each of the next `times` outcomes (added by later `returns`/`throws`) wait `ms` milliseconds
   * on the clock before settling. Delays given back to back add up for the same outcome.
   * An aborted signal passed to {@link Sequence.next} stops the wait at once.
   * @param ms milliseconds to wait (finite, >= 0)
   * @param times how many of the following outcomes wait (integer >= 1, default 1)
   * @throws PolicyConfigError when `ms` or `times` is invalid.
   */
  delays(ms: number, times = 1): this {
    checkDuration('ms', ms);
    let left = checkTimes('times', times);
    const next: PendingDelay[] = [];
    for (const run of this.pending) {
      if (left === 0) {
        next.push(run);
      } else if (run.count <= left) {
        next.push({ ms: run.ms + ms, count: run.count });
        left -= run.count;
      } else {
        next.push({ ms: run.ms + ms, count: left }, { ms: run.ms, count: run.count - left });
        left = 0;
      }
    }
    if (left > 0) next.push({ ms, count: left });
    this.pending = next;
    return this;
  }

  /**
   * Plays the next step: waits its delay (if any) on the clock, then resolves or rejects as scripted.
   * @param context `signal` cancels a scripted delay: an aborted signal rejects with `signal.reason`
   *   at once, clears the timer and removes the listener. A step without a delay ignores the signal
   *   (it answers at once, like a dependency that does not look at it).
   * @returns the scripted value
   * @throws the scripted error; the signal's reason when aborted during a delay; an `Error` when the
   *   script is empty or ends with an unconsumed `delays`.
   */
  next(context?: SequenceCallContext): Promise<T> {
    this.calls++;
    if (this.pending.length > 0) {
      const waiting = this.pending.reduce((sum, run) => sum + run.count, 0);
      return Promise.reject(
        new Error(
          `Sequence: the script ends with delays() for ${waiting} outcome(s) that were never added; ` +
            'follow delays() with returns() or throws()',
        ),
      );
    }
    const step = this.script.take();
    if (step === undefined) {
      return Promise.reject(
        new Error('Sequence: the script is empty; add returns() or throws() before calling next()'),
      );
    }
    if (step.delay > 0) {
      return sleep(this.clock, step.delay, context?.signal).then(() => settle(step.outcome));
    }
    return settle(step.outcome);
  }

  /** How many times {@link Sequence.next} has been called (including calls that were aborted). */
  get callCount(): number {
    return this.calls;
  }

  /** How many scripted calls are left before the last step starts repeating (0 once it repeats). */
  get remaining(): number {
    return this.script.remaining;
  }

  private add(outcome: Outcome<T>, times: number): this {
    let left = times;
    while (left > 0 && this.pending.length > 0) {
      const run = this.pending[0]!;
      const take = Math.min(run.count, left);
      this.script.add({ outcome, delay: run.ms }, take);
      run.count -= take;
      left -= take;
      if (run.count === 0) this.pending.shift();
    }
    if (left > 0) this.script.add({ outcome, delay: 0 }, left);
    return this;
  }
}

function settle<T>(outcome: Outcome<T>): Promise<T> {
  return outcome.kind === 'returns'
    ? Promise.resolve(outcome.value)
    : Promise.reject(outcome.error);
}
