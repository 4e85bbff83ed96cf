import type { AttemptContext } from '../core/attempt-context.js';
import type { CallResult } from '../core/call-result.js';
import type { Policy, RunOptions } from '../core/policy.js';

/** Where a handle reads its policy from (the `PolicyRegistry`). */
export interface PolicySource {
  /** The current policy registered under `name`. @throws Error when the name is unknown. */
  get(name: string): Policy;
}

/**
 * A stable reference to a named policy, injected by `@InjectPolicy(name)`. Every call runs the
 * registry's *current* policy for the name, so after `PolicyRegistry.reload` the same handle runs the
 * new settings (and keeps spending from the same retry budget, which is pinned to the name).
 *
 * ```ts
 * constructor(@InjectPolicy('payments') private readonly payments: PolicyHandle) {}
 * charge(order: Order) {
 *   return this.payments.run(({ signal }) => this.gateway.charge(order, { signal }));
 * }
 * ```
 */
export class PolicyHandle {
  /**
   * @param source the registry to read the current policy from
   * @param name the registration name
   */
  constructor(
    private readonly source: PolicySource,
    /** The registration name this handle runs. */
    readonly name: string,
  ) {}

  /** The policy currently registered under {@link PolicyHandle.name}. @throws Error when the name is not registered. */
  get current(): Policy {
    return this.source.get(this.name);
  }

  /**
   * Runs `work` under the current policy (see `Policy.run`).
   * @param work called once per attempt with `{ signal, attempt }` (attempt is 1-based)
   * @param options `{ signal }`: the caller's cancellation signal
   * @returns the value of the successful attempt
   * @throws the final attempt's error, `CallRejectedError`, `DeadlineExceededError`, or the signal's reason;
   *   synchronously-looking errors (unknown name) surface as a rejection.
   */
  async run<T>(work: (context: AttemptContext) => T | PromiseLike<T>, options?: RunOptions): Promise<T> {
    return this.current.run(work, options);
  }

  /**
   * Like {@link PolicyHandle.run} but never rejects for the call's outcome: resolves to
   * `{ ok, value, error, reason, attempts, duration }` (see `Policy.tryRun`).
   * @throws Error (as a rejection) only when the name is not registered.
   */
  async tryRun<T>(work: (context: AttemptContext) => T | PromiseLike<T>, options?: RunOptions): Promise<CallResult<T>> {
    return this.current.tryRun(work, options);
  }
}
