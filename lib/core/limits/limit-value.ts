import { PolicyConfigError } from '../errors.js';
import { isPlainObject, sectionRule } from '../rules/value-rule.js';
import type { Clock } from '../time/clock.js';
import { ConcurrencyLimiter } from './concurrency-limiter.js';
import {
  type AdaptiveLimitOptions,
  type ConcurrencyLimitOptions,
  type ResolvedLimitSettings,
  adaptiveSettings,
  concurrencySettings,
} from './limit-settings.js';
import { RateLimiter, type RateLimiterContext } from './rate-limiter.js';
import { type RateLimitOptions, rateSettings } from './rate-settings.js';

/**
 * The config form of a limit: `{ concurrency, queue? }`, `{ adaptive: { initial?, minimum?, maximum? }, queue? }`
 * or `{ rate: { limit, per, burst?, maximumWait? } }` (`per` and `maximumWait` in ms, or a duration
 * string such as `'1s'` in a config file).
 */
export type LimitConfig =
  | { concurrency: number; queue?: number }
  | { adaptive: AdaptiveLimitOptions | true; queue?: number }
  | { rate: RateLimitOptions };

/** What a policy's `limit` resolves to: a concurrency limiter or a rate limiter. */
export type Limiter = ConcurrencyLimiter | RateLimiter;

const CONFIG_SHAPE =
  'must be { concurrency, queue? }, { adaptive: { initial?, minimum?, maximum? } | true, queue? } or { rate: { limit, per, burst?, maximumWait? } }, a Limit, or false';

/**
 * A policy's `limit` option as a value (DESIGN §3.8), resolved to a {@link ConcurrencyLimiter} or a
 * {@link RateLimiter} when a call needs one:
 * - `Limit.concurrency(n, { queue })` (a bulkhead), `Limit.adaptive({ initial, minimum, maximum,
 *   queue })` and `Limit.rate({ limit, per, burst })`: one limiter per owner (a policy instance or a
 *   scope key), created on first use, so a keyed instance (per host, per service, per key) has its own;
 * - `Limit.using(instance)`: always that limiter (the config layer pins one per policy name so a
 *   reload resizes it live, with `reconfigure`).
 *
 * A policy has one limit: a concurrency limit or a rate limit, not both (a rate token spent by a call
 * that then waits for a slot would be spent on nothing when the wait ends in a deadline).
 */
export class Limit {
  private readonly perOwner: WeakMap<object, Limiter> | undefined;

  private constructor(
    /** The settings a new limiter gets (the pinned instance's at the time, for `using`). */
    readonly settings: ResolvedLimitSettings,
    private readonly instance?: Limiter,
    private readonly perCall = false,
  ) {
    this.perOwner = instance === undefined ? new WeakMap() : undefined;
  }

  /** `perOwner`: a limiter per owner; `using`: one pinned instance. */
  get kind(): 'perOwner' | 'using' {
    return this.instance === undefined ? 'perOwner' : 'using';
  }

  /**
   * At most `limit` attempts in flight at once; a caller beyond them waits in a FIFO queue of at most
   * `options.queue` (default 0), else is refused (Limited) after the guarded pause.
   * @param limit an integer in [1, 100000]
   * @throws PolicyConfigError naming `limit.concurrency` or `limit.queue`, the value and the rule
   */
  static concurrency(limit: number, options?: ConcurrencyLimitOptions): Limit {
    return new Limit(concurrencySettings(limit, options, 'limit'));
  }

  /**
   * A limit discovered from measured latency (see `AdaptiveLimit`): starts at `initial` (20), stays in
   * [`minimum` (1), `maximum` (200)], grows only while used, shrinks on drops and queueing latency.
   * @throws PolicyConfigError naming `limit.<field>` for a bad value, an unknown key, `minimum > maximum`
   *   or `initial` outside [minimum, maximum]
   */
  static adaptive(options?: AdaptiveLimitOptions): Limit {
    return new Limit(adaptiveSettings(options, 'limit'));
  }

  /**
   * At most `limit` attempts start per `per` ms, `burst` at once after a quiet spell (GCRA). An attempt
   * finding no token is refused (Limited, `retryAfter` the ms until the next token) after the guarded
   * pause — its work never starts — or, with `maximumWait`, waits for its token when it comes that
   * soon and before the deadline (the caller's abort ends the wait). Every attempt takes a token (a
   * retry is a request too). With `store`, the limit is shared by every process using it (tokens
   * leased `lease` at a time; while the store fails, each process runs on `limit / expectedInstances`).
   * @throws PolicyConfigError naming `limit.rate.<field>`, the value and the rule
   */
  static rate(options: RateLimitOptions): Limit {
    const settings = rateSettings(options, 'limit');
    if (settings.shared && settings.store === undefined)
      throw new PolicyConfigError(
        'limit.rate.shared',
        true,
        "needs a store in code: pass store (e.g. new RedisRateStore(client)); shared: true is config's way to use the application's store",
      );
    return new Limit(settings);
  }

  /** A value that always resolves to `instance` (its clock is the one it was built with). */
  static using(instance: Limiter): Limit {
    return new Limit(instance.settings, instance);
  }

  /**
   * The same concurrency limit with its slots held per call — from the call's first admission to its
   * end, through backoff and retries, the limit learning from the whole call — instead of per attempt.
   * Not a choice users get: docs/limits.md measures both holds in the scenario matrix and says why a
   * slot is held per attempt; this is the other row of that measurement. A hedged call still holds a
   * slot per attempt.
   * @throws PolicyConfigError naming `limit` for a rate limit or `Limit.using`
   * @internal the simulator's comparison of the two holds
   */
  heldPerCall(): Limit {
    if (this.instance !== undefined || this.settings.kind === 'rate')
      throw new PolicyConfigError(
        'limit',
        this.instance !== undefined ? 'Limit.using(instance)' : 'Limit.rate(options)',
        'must be Limit.concurrency or Limit.adaptive to hold its slots per call',
      );
    return new Limit(this.settings, undefined, true);
  }

  /**
   * Reads the settings of the config form (`limit:` of a policy in config).
   * @param value `{ concurrency: 20, queue: 50 }`, `{ adaptive: { initial: 20, maximum: 200 } }`
   *   (`adaptive: true` for every default), `false`/`undefined` for none
   * @param field the path errors name
   * @returns the settings, `undefined` for none
   * @throws PolicyConfigError naming the path, the value and the rule
   */
  static settingsFrom(value: unknown, field = 'limit'): ResolvedLimitSettings | undefined {
    if (value === undefined || value === false) return undefined;
    if (value instanceof Limit) return value.settings;
    if (!isPlainObject(value))
      throw new PolicyConfigError(field, value, sectionRule(value, CONFIG_SHAPE));
    const hasConcurrency = Object.hasOwn(value, 'concurrency');
    const hasAdaptive = Object.hasOwn(value, 'adaptive');
    for (const key of Object.keys(value)) {
      if (key !== 'concurrency' && key !== 'adaptive' && key !== 'queue' && key !== 'rate')
        throw new PolicyConfigError(
          `${field}.${key}`,
          value[key],
          'is not a known limit setting (concurrency, adaptive, queue, rate)',
        );
    }
    if (Object.hasOwn(value, 'rate')) {
      if (hasConcurrency || hasAdaptive || Object.hasOwn(value, 'queue')) {
        const other = hasConcurrency ? 'concurrency' : hasAdaptive ? 'adaptive' : 'queue';
        throw new PolicyConfigError(
          `${field}.${other}`,
          value[other],
          'cannot be combined with rate: a policy has one limit, a concurrency limit or a rate limit (a rate limit waits up to rate.maximumWait instead of queueing)',
        );
      }
      return rateSettings(value.rate, field);
    }
    if (hasConcurrency === hasAdaptive)
      throw new PolicyConfigError(
        field,
        value,
        `${CONFIG_SHAPE} (exactly one of concurrency, adaptive, rate)`,
      );
    const queue = value.queue === undefined ? {} : { queue: value.queue };
    if (hasConcurrency) return concurrencySettings(value.concurrency, queue, field);
    const adaptive = value.adaptive === true ? {} : value.adaptive;
    if (!isPlainObject(adaptive))
      throw new PolicyConfigError(
        `${field}.adaptive`,
        adaptive,
        sectionRule(adaptive, 'must be true or { initial?, minimum?, maximum? }'),
      );
    if (Object.hasOwn(adaptive, 'queue'))
      throw new PolicyConfigError(
        `${field}.adaptive.queue`,
        adaptive.queue,
        `is not a known adaptive limit setting here (initial, minimum, maximum): write the queue beside it, as ${field}.queue`,
      );
    // Errors name where the value is written: limit.adaptive.<field>, and limit.queue beside it.
    const settings = adaptiveSettings(adaptive, `${field}.adaptive`);
    if (value.queue === undefined) return settings;
    return Object.freeze({ ...settings, queue: adaptiveSettings(queue, field).queue });
  }

  /** A per-owner limit of `settings` (already validated). */
  static of(settings: ResolvedLimitSettings): Limit {
    return new Limit(settings);
  }

  /**
   * The limiter for `owner`, created on first use with these settings.
   * @param owner the policy instance or scope key object it belongs to
   * @param clock the owner's clock (queued deadlines, adaptive windows, rate tokens)
   * @param paused while it answers true the adaptive limit learns nothing (`Saturation.above`)
   * @param context a rate limit's shared key (the policy's name) and store-state listener
   * @throws PolicyConfigError (field `limit.rate.key`) for a shared rate limit with no key and no name
   */
  resolve(
    owner: object,
    clock: Clock,
    paused?: () => boolean,
    context?: RateLimiterContext,
  ): Limiter {
    if (this.instance !== undefined) return this.instance;
    let limiter = this.perOwner!.get(owner);
    if (limiter === undefined) {
      const settings = this.settings;
      limiter =
        settings.kind === 'rate'
          ? new RateLimiter(settings, clock, context)
          : this.perCall
            ? new ConcurrencyLimiter(settings, clock, paused).holdPerCall()
            : new ConcurrencyLimiter(settings, clock, paused);
      this.perOwner!.set(owner, limiter);
    }
    return limiter;
  }
}
