import type { Clock } from '../time/clock.js';
import type { BreakerTransitionListener } from './breaker-state.js';
import { CircuitBreaker } from './circuit-breaker.js';
import {
  BREAKER_DEFAULTS,
  validateBreakerSettings,
  type BreakerSettings,
  type ResolvedBreakerSettings,
} from './breaker-settings.js';
import { PolicyConfigError } from '../errors.js';
import { PLAIN_OBJECT_RULE, isPlainObject } from '../rules/value-rule.js';

/**
 * A policy's breaker option as a value (DESIGN §3.1, §3.6), resolved to a {@link CircuitBreaker}
 * when a call needs one:
 * - `Breaker.default` / `Breaker.with(settings)`: one breaker per owner (a policy instance or a
 *   scope key object), created on first use and held in a `WeakMap`, like `RetryBudget.automatic`;
 * - `Breaker.using(instance)`: always that breaker (the Nest registry pins one per policy name so
 *   its state survives a config reload; reload it with {@link CircuitBreaker.reconfigure}).
 */
export class Breaker {
  /**
   * Every default of DESIGN §3.6: 5 consecutive Transient failures (the run measured against the recent
   * error rate) with a 0.5 failure-rate floor over the last 100 outcomes, the relative and slow trips
   * off, breaks of 1000 ms (maximumBreak 1000 ms: no doubling), equal jitter, 1 probe, closed after 2.
   */
  static readonly default: Breaker = new Breaker('perOwner', BREAKER_DEFAULTS, undefined, {});

  private readonly perOwner: WeakMap<object, CircuitBreaker> | undefined;

  private constructor(
    /** `perOwner`: a breaker per owner; `using`: one pinned instance. */
    readonly kind: 'perOwner' | 'using',
    /** The settings a new breaker gets (the pinned instance's own settings for `using`). */
    readonly settings: ResolvedBreakerSettings,
    private readonly instance?: CircuitBreaker,
    /**
     * The settings as written, before defaults: {@link with} lays new ones over these, so a default
     * stays a default (and a field left unset keeps its rule, e.g. an explicit `consecutiveFailures`).
     */
    private readonly given: BreakerSettings = settings,
  ) {
    this.perOwner = kind === 'perOwner' ? new WeakMap() : undefined;
  }

  /**
   * A per-owner breaker with these settings over the defaults.
   * @throws PolicyConfigError naming `breaker.<field>` for an unknown key or a bad value.
   */
  static with(settings: BreakerSettings): Breaker {
    return Breaker.default.with(settings);
  }

  /** A value that always resolves to `instance` (its clock, random and listener are the ones it was built with). */
  static using(instance: CircuitBreaker): Breaker {
    return new Breaker('using', instance.settings, instance);
  }

  /**
   * Reads the `breaker` option of a policy config: `true` → {@link Breaker.default}, a settings
   * object → {@link Breaker.with}, a `Breaker` → itself, `false`/`undefined` → `undefined` (no breaker).
   * @param value the option as written
   * @param field the field path for error messages (default `breaker`)
   * @throws PolicyConfigError naming the field for any other value, an unknown key or a bad setting.
   */
  static from(value: unknown, field = 'breaker'): Breaker | undefined {
    if (value === undefined || value === false) return undefined;
    if (value === true) return Breaker.default;
    if (value instanceof Breaker) return value;
    if (!isPlainObject(value))
      throw new PolicyConfigError(
        field,
        value,
        'must be true, false, a Breaker or an object of breaker settings (a plain object)',
      );
    return new Breaker('perOwner', validateBreakerSettings(value, field), undefined, {
      ...value,
    } as BreakerSettings);
  }

  /**
   * A per-owner breaker with `settings` laid over this value's settings (a pinned `using` value
   * derives a per-owner one).
   * @throws PolicyConfigError naming `breaker.<field>` for an unknown key or a bad value.
   */
  with(settings: BreakerSettings): Breaker {
    if (!isPlainObject(settings))
      throw new PolicyConfigError('breaker', settings, PLAIN_OBJECT_RULE);
    const base: BreakerSettings = { ...this.given };
    // A value that does not double its breaks keeps not doubling when only its first break changes.
    if (
      settings.breakDuration !== undefined &&
      settings.maximumBreak === undefined &&
      base.maximumBreak === base.breakDuration
    )
      delete base.maximumBreak;
    const merged = { ...base, ...settings };
    return new Breaker('perOwner', validateBreakerSettings(merged, 'breaker'), undefined, merged);
  }

  /**
   * The breaker for `owner`, created on first use with these settings.
   * @param owner the policy instance or scope key object the breaker belongs to
   * @param clock the owner's clock (all breaker time and timers)
   * @param random the owner's random source (jitter, recovery admission)
   * @param onTransition told about state changes of a breaker this call creates
   */
  resolve(
    owner: object,
    clock: Clock,
    random: () => number,
    onTransition?: BreakerTransitionListener,
  ): CircuitBreaker {
    if (this.instance !== undefined) return this.instance;
    let breaker = this.perOwner!.get(owner);
    if (breaker === undefined) {
      breaker = new CircuitBreaker(this.settings, { clock, random, onTransition });
      this.perOwner!.set(owner, breaker);
    }
    return breaker;
  }
}
