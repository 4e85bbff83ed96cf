import type { CircuitBreaker } from '../breaker/circuit-breaker.js';
import type { RetryBudgetState } from '../budget/retry-budget-state.js';
import type { ResolvedCeilingSettings } from '../estimators/attempt-ceiling.js';
import type { MeasuredLatency } from '../estimators/measured-latency.js';
import type { HedgeState } from '../hedging/hedge-state.js';
import { ConcurrencyLimiter } from '../limits/concurrency-limiter.js';
import type { Limiter } from '../limits/limit-value.js';
import type { CallObserver, ExecutablePolicy, ResolvedPolicyOptions } from './executable-policy.js';
import type { Clock } from '../time/clock.js';

/**
 * What the executor reads of a policy instance that does not change from one call to the next, read
 * once when the instance runs its first call: its settings, its resolved breaker, budget and
 * limiter, and the answers every call would otherwise work out again (does the policy add anything,
 * must attempts be timed). A call's state (`Call`) keeps only what is its own.
 */
export class CallPlan {
  readonly options: ResolvedPolicyOptions;
  readonly clock: Clock;
  /** The policy's observer (its listeners as one), or `undefined`. */
  readonly listener: CallObserver | undefined;
  readonly breaker: CircuitBreaker | undefined;
  readonly bucket: RetryBudgetState | undefined;
  readonly limiter: Limiter | undefined;
  /**
   * Whether a call holds its limiter slot from its first admission to its end (a limit made with the
   * internal `Limit.heldPerCall`, no hedge); else a slot is held per attempt.
   */
  readonly slotPerCall: boolean;
  /** What the policy's hedge has learnt, or `undefined` without a `hedge`. */
  readonly hedge: HedgeState | undefined;
  /** What the policy measures of its dependency (ceiling, measured backoff), or `undefined`. */
  readonly measured: MeasuredLatency | undefined;
  /** The attempt ceiling's settings when it is in force (configured, `adaptive`), else `undefined`. */
  readonly ceiling: ResolvedCeilingSettings | undefined;
  /**
   * Whether every rule of the loop would pass a successful first attempt through untouched: one
   * attempt, no budget, breaker, deadline, attempt timeout, attempt ceiling, limit, fallback,
   * listener or classifier rule. A plain call of such a policy is the work's own promise.
   */
  readonly addsNothing: boolean;
  /** Whether every attempt is timed: a listener reports durations, the breaker, the limiter and the measured terms learn from them. */
  readonly timesAttempts: boolean;
  /** Whether attempts after the first are timed for the retry budget alone (it reads their durations). */
  readonly timesRetries: boolean;

  constructor(readonly policy: ExecutablePolicy) {
    const o = policy.options;
    this.options = o;
    this.clock = o.clock;
    this.listener = o.onEvent;
    this.breaker = policy.breaker();
    this.bucket = policy.bucket();
    this.limiter = o.limit === undefined ? undefined : policy.limiter();
    this.slotPerCall =
      this.limiter instanceof ConcurrencyLimiter &&
      this.limiter.holdsPerCall &&
      o.hedge === undefined;
    this.hedge = o.hedge === undefined ? undefined : policy.hedger();
    this.measured = policy.measurements();
    this.ceiling =
      this.measured !== undefined && o.attemptCeiling !== undefined
        ? o.attemptCeiling.settings
        : undefined;
    this.addsNothing =
      o.attempts === 1 &&
      o.onEvent === undefined &&
      o.deadline === undefined &&
      o.attemptTimeout === undefined &&
      !o.useAmbientDeadline &&
      o.classifier.valuesAreOk &&
      this.breaker === undefined &&
      o.limit === undefined &&
      o.fallback === undefined &&
      this.ceiling === undefined &&
      this.bucket === undefined;
    this.timesAttempts =
      o.onEvent !== undefined ||
      this.breaker !== undefined ||
      o.limit !== undefined ||
      this.measured !== undefined;
    this.timesRetries = this.bucket?.timesRetries === true;
  }
}
