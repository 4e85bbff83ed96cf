import type { AttemptContext } from '../execution/attempt-context.js';
import { type CallResult, CallLog } from '../execution/call-result.js';
import type { CircuitBreaker } from '../breaker/circuit-breaker.js';
import { Classifier } from '../classification/classifier.js';
import { Breaker } from '../breaker/breaker-value.js';
import { checkDeadlineFits, checkListenerReplaced } from '../diagnostics/policy-checks.js';
import { type CallEventListener, breakerTransitionEvent } from '../execution/events.js';
import { type CallContinuation, type Work, execute } from '../execution/executor.js';
import { type CallWrapper, DEFAULT_OPTIONS, type ExecutablePolicy, type PolicyOptions, type ResolvedPolicyOptions, mergeOptions } from './policy-options.js';
import type { RetryBudgetState } from '../budget/retry-budget-state.js';
import { PolicyConfigError } from '../errors.js';
import { ATTEMPTS_RULE } from '../rules/option-rules.js';
import { checkValue } from '../rules/value-rule.js';
import { Ambient } from '../ambient/ambient-context.js';

/** Per-call options. */
export interface RunOptions {
  /** Cancels the call: no attempt starts after it aborts, a running attempt's signal aborts, no retry. */
  signal?: AbortSignal;
  /**
   * At most this many attempts for this call, an integer in [1, 100] (the `attempts` rule); it can lower the policy's `attempts`,
   * never raise it (1 = this call is not retried, e.g. a request that is not safe to repeat).
   * Default: the policy's.
   */
  attempts?: number;
  /**
   * Carries on a logical call made earlier whose accepted value broke afterwards (a download whose
   * body broke mid-way): its next attempt is a retry of that call — budget, breaker, backoff and the
   * original deadline apply, attempts count on from those already made, and the call is not counted
   * twice. Each run reports its own terminal event. See {@link CallContinuation}.
   */
  continuing?: CallContinuation;
}

/**
 * An immutable resilience policy: bounds stated as a value, enforced by one flat executor around each
 * call (DESIGN §3.1). Derive variants with {@link Policy.with}; state (the retry budget's bucket)
 * belongs to the instance, so two derived policies never share an automatic budget.
 */
export class Policy implements ExecutablePolicy {
  private resolvedBucket: RetryBudgetState | undefined | null = null;
  private resolvedBreaker: CircuitBreaker | undefined | null = null;

  /** Use `Resilience.default.with(...)` rather than constructing directly. */
  constructor(readonly options: ResolvedPolicyOptions) {}

  /** The policy's name (`''` when unnamed). */
  get name(): string {
    return this.options.name;
  }

  /** The retry budget's bucket for this instance (resolved on first use), or undefined with `RetryBudget.none`. */
  bucket(): RetryBudgetState | undefined {
    if (this.resolvedBucket === null) this.resolvedBucket = this.options.budget.resolve(this, this.options.clock);
    return this.resolvedBucket;
  }

  /**
   * The circuit breaker for this instance (resolved on first use), or undefined without one. Its state
   * changes are reported to this policy's listener as `breakerOpened` (open, isolated),
   * `breakerHalfOpened` (half-open, recovering) and `breakerClosed` events.
   */
  breaker(): CircuitBreaker | undefined {
    if (this.resolvedBreaker === null) {
      const o = this.options;
      // First use of this instance (every run asks for its breaker): judge the finished shape once.
      checkDeadlineFits(o);
      this.resolvedBreaker = o.breaker?.resolve(this, o.clock, o.random, (_from, to, breakMs) => o.onEvent?.(breakerTransitionEvent(o.name, to, breakMs)));
    }
    return this.resolvedBreaker;
  }

  /**
   * A new policy with `changes` applied over this one's settings.
   * @throws PolicyConfigError naming the field, the value and the rule (attempts < 1, negative durations,
   *   unknown keys, values of the wrong kind).
   * Replacing listeners the policy had (`onEvent` without `around`) is reported once per policy name as
   * a run-time warning (`ResilienceWarningCodes.replacedListeners`, see `setWarningSink`).
   */
  with(changes: PolicyOptions): Policy {
    const policy = new Policy(mergeOptions(this.options, changes));
    checkListenerReplaced(this.options, changes);
    return policy;
  }

  /**
   * A new policy that also calls `listener` for every event (after any listener already set). What is
   * attached stays attached: telemetry and logging keep working (unlike `with({ onEvent })`, which
   * replaces the listener and turns them off).
   */
  withListener(listener: CallEventListener): Policy {
    if (typeof listener !== 'function') return this.with({ onEvent: listener });
    const previous = this.options.onEvent;
    const onEvent: CallEventListener =
      previous === undefined
        ? listener
        : (event) => {
            try {
              previous(event);
            } finally {
              listener(event);
            }
          };
    return this.with({ onEvent, around: this.options.around });
  }

  /**
   * Runs `work` under this policy.
   * @param work called once per attempt with `{ signal, attempt }`
   * @returns the value of the first Ok attempt (or the last classified value once retries are over)
   * @throws the final attempt's error; `CallRejectedError` when the retry budget refuses a retry;
   *   `DeadlineExceededError` when the deadline passes; the signal's reason when the caller aborts;
   *   `PolicyConfigError` (field `attempts`) when `options.attempts` is not an integer in [1, 100].
   */
  run<T>(work: (context: AttemptContext) => T | PromiseLike<T>, options?: RunOptions): Promise<T> {
    const attempts = options?.attempts;
    if (attempts !== undefined) checkValue(ATTEMPTS_RULE, 'attempts', attempts);
    const continuing = options?.continuing;
    if (continuing !== undefined) checkContinuation(continuing);
    const around = this.options.around;
    if (around === undefined) return execute(this, work as Work<T>, options?.signal, undefined, attempts, continuing);
    return runAround(around, this, work as Work<T>, options?.signal, undefined, attempts, continuing);
  }

  /**
   * Like {@link Policy.run} but never rejects for the call's outcome: resolves to
   * `{ ok, value, error, reason, attempts, duration }`. Rejects only for invalid `options` (as `run` throws).
   */
  async tryRun<T>(work: (context: AttemptContext) => T | PromiseLike<T>, options?: RunOptions): Promise<CallResult<T>> {
    const attempts = options?.attempts;
    if (attempts !== undefined) checkValue(ATTEMPTS_RULE, 'attempts', attempts);
    const continuing = options?.continuing;
    if (continuing !== undefined) checkContinuation(continuing);
    const log = new CallLog();
    try {
      const around = this.options.around;
      const value = await (around === undefined
        ? execute(this, work as Work<T>, options?.signal, log, attempts, continuing)
        : runAround(around, this, work as Work<T>, options?.signal, log, attempts, continuing));
      return { ok: log.reason === 'succeeded', value, error: undefined, reason: log.reason, attempts: log.attempts, duration: log.duration };
    } catch (error) {
      return { ok: false, value: undefined, error, reason: log.reason, attempts: log.attempts, duration: log.duration };
    }
  }
}

function checkContinuation(continuing: CallContinuation): void {
  if (typeof continuing !== 'object' || continuing === null) throw new PolicyConfigError('continuing', continuing, 'must be { attempts, error, deadlineAt }');
  const { attempts, deadlineAt } = continuing;
  if (typeof attempts !== 'number' || !Number.isInteger(attempts) || attempts < 1) {
    throw new PolicyConfigError('continuing.attempts', attempts, 'must be an integer >= 1 (the attempts the call already made)');
  }
  if (typeof deadlineAt !== 'number' || Number.isNaN(deadlineAt)) throw new PolicyConfigError('continuing.deadlineAt', deadlineAt, 'must be a clock reading in ms, or Infinity for no deadline');
}

/**
 * `execute` inside the policy's call wrapper. A function of its own: a method that builds a closure
 * over its arguments allocates their context on every call, even on the paths that build no closure.
 */
function runAround<T>(
  around: CallWrapper,
  policy: Policy,
  work: Work<T>,
  signal: AbortSignal | undefined,
  log: CallLog | undefined,
  attempts: number | undefined,
  continuing: CallContinuation | undefined,
): Promise<T> {
  return around(() => execute(policy, work, signal, log, attempts, continuing), policy);
}

/** Ready-made policies (DESIGN §3.1), and the single-shot scope. */
export const Resilience = {
  /** 3 attempts, exponential backoff with full jitter (100 ms base, 30 s cap), automatic retry budget, no deadline. */
  default: new Policy(DEFAULT_OPTIONS),
  /**
   * `default` plus a 30 s deadline on the whole call, a circuit breaker with the defaults of DESIGN
   * §3.6 and `Classifier.http` (a 404 is an answer, a 503 with `Retry-After` is pushback).
   */
  http: new Policy(mergeOptions(DEFAULT_OPTIONS, { deadline: 30_000, breaker: Breaker.default, classifier: Classifier.http })),
  /**
   * Runs `fn` in a single-shot scope (DESIGN §3.9): every policy call made inside it, to any depth
   * and through its awaits, makes one attempt — no retries — for work an outer layer already
   * retries. The breaker, budget deposits and deadlines still apply. Returns what `fn` returns.
   * Same as `Ambient.singleShot`.
   */
  singleShot: Ambient.singleShot,
  /**
   * The seeds' HTTP proposal's conservative defaults, for services with a wide fan-out: 2 attempts
   * (one retry), the automatic retry budget, and a breaker floored at a 50 % failure ratio (every
   * breaker's default `failureRateFloor` since issue 8; `minimumErrorRate: 0.5` floors the relative
   * trip too if it is turned on; the shortest tripping run raised to 20), with `Classifier.http`. The proposal's other rule — no retry of a
   * non-idempotent call whose outcome is ambiguous — is the transports': the resilient `fetch`
   * retries POST/PATCH only after a definitive refusal (429/503) or a connection never opened
   * unless marked repeatable, and the gRPC interceptor retries only methods marked repeatable.
   */
  conservative: new Policy(
    mergeOptions(DEFAULT_OPTIONS, { attempts: 2, breaker: Breaker.with({ minimumErrorRate: 0.5, consecutiveFailures: 20 }), classifier: Classifier.http }),
  ),
} as const;
