import {
  type AttemptContext,
  type CallResult,
  type CheckpointedSource,
  type CheckpointedStream,
  type KeyedFamily,
  type KeyedPolicySource,
  type Policy,
  PolicyConfigError,
  type PolicyScope,
  type RunOptions,
  type Streamed,
} from '../core/index.js';

/** Where a handle reads its policy from (the `PolicyRegistry`). */
export interface PolicySource {
  /** The current policy registered under `name`. @throws Error when the name is unknown. */
  get(name: string): Policy;
  /**
   * The scope of `name` when it is configured for keyed use, else `undefined` (optional: a source
   * without it has no scoped names). @throws Error when the name is unknown.
   */
  scope?(name: string): PolicyScope<string | number> | undefined;
  /**
   * The template of per-key state outside a configured scope (per host, per service): the name's
   * settings with budget and breaker resolved per key (optional: without it, keyed families built
   * from the handle use `get(name)` as it is). @throws Error when the name is unknown.
   */
  keyedTemplate?(name: string): Policy;
  /** Records a keyed family built from `name`, for health (optional). */
  trackKeys?(name: string, family: KeyedFamily): void;
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
export class PolicyHandle implements KeyedPolicySource {
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
   * What per-host (HTTP) and per-service (gRPC) state built from this handle starts from: the
   * name's current settings with a retry budget and breaker per key instead of the ones pinned to
   * the name (a `budget.shared` bucket stays shared). The same object until a reload changes the
   * name's config; `createResilientFetch({ policy: handle })` and
   * `createResilienceInterceptor({ policy: handle })` read it per call, so each host or service
   * keeps its state across reloads and adopts the new settings.
   * @throws UnknownPolicyError when the name is not registered.
   */
  get keyedTemplate(): Policy {
    return this.source.keyedTemplate?.(this.name) ?? this.current;
  }

  /**
   * Records `family` (the hosts of a resilient fetch, the services of a gRPC interceptor built from
   * this handle) with the registry, so `ResilienceHealthIndicator` reports its keys under the name
   * and `downWhenOpen` applies to them. Called by those clients; held weakly.
   */
  trackKeys(family: KeyedFamily): void {
    this.source.trackKeys?.(this.name, family);
  }

  /**
   * The keyed policy of `key` (a tenant, shard or channel) for a name configured with `scope`: it has
   * its own circuit breaker and its own retry-budget bucket, so one key's failures never open another
   * key's breaker or spend its retries (a `budget.shared` bucket stays shared). An O(1) lookup that
   * allocates nothing for a key already seen; call it per call rather than keeping the result, since
   * a reload that changes the name's config gives each key a new instance (with the new settings,
   * over the key's kept breaker and bucket). Beyond
   * the scope's `maximumKeys` (default 1024) the least recently used keys are evicted approximately and
   * start fresh (a full bucket, a closed breaker) when they return.
   *
   * ```ts
   * return this.billing.for(tenantId).run(({ signal }) => this.api.charge(order, { signal }));
   * ```
   * @param key the key, a string or a number (compared by value; `1` and `'1'` are different keys)
   * @throws PolicyConfigError (field `policies.<name>.scope`) when the name is not configured for keyed
   *   use; UnknownPolicyError when the name is not registered; TypeError for an undefined or null key.
   */
  for(key: string | number): Policy {
    const scope = this.source.scope?.(this.name);
    if (scope === undefined) {
      this.source.get(this.name); // an unknown name reports itself first
      throw new PolicyConfigError(
        `policies.${this.name}.scope`,
        undefined,
        'must be true or { "maximumKeys": n } to use handle.for(key) (keyed policies)',
      );
    }
    return scope.for(key);
  }

  /**
   * Runs a checkpointed stream under the current policy (see `Policy.run`): resolves at its first
   * element with a stream that restarts from the last checkpoint after a Transient failure.
   * @param source the checkpointed stream: where it starts, the position after each element, how to open it
   * @param options `{ signal }`: the caller's cancellation signal
   * @throws as `Policy.run`
   */
  run<T, C>(source: CheckpointedSource<T, C>, options?: RunOptions): Promise<CheckpointedStream<T>>;
  /**
   * Runs `work` under the current policy (see `Policy.run`; work returning a stream resolves with a
   * protected stream at its first element).
   * @param work called once per attempt with `{ signal, attempt }` (attempt is 1-based)
   * @param options `{ signal }`: the caller's cancellation signal
   * @returns the value of the successful attempt
   * @throws the final attempt's error, `CallRejectedError`, `DeadlineExceededError`, or the signal's reason;
   *   synchronously-looking errors (unknown name) surface as a rejection.
   */
  run<T>(
    work: (context: AttemptContext) => T | PromiseLike<T>,
    options?: RunOptions,
  ): Promise<Streamed<T>>;
  async run(
    work: ((context: AttemptContext) => unknown) | CheckpointedSource<unknown, unknown>,
    options?: RunOptions,
  ): Promise<unknown> {
    return this.current.run(work as (context: AttemptContext) => unknown, options);
  }

  /**
   * Like {@link PolicyHandle.run} but never rejects for the call's outcome: resolves to
   * `{ ok, value, error, reason, attempts, duration }` (see `Policy.tryRun`).
   * @throws Error (as a rejection) only when the name is not registered.
   */
  async tryRun<T>(
    work: (context: AttemptContext) => T | PromiseLike<T>,
    options?: RunOptions,
  ): Promise<CallResult<Streamed<T>>> {
    return this.current.tryRun(work, options);
  }
}
