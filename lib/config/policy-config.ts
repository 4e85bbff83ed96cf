import {
  Backoff,
  BREAKER_DEFAULTS,
  type ResolvedCeilingSettings,
  type BreakerSettings,
  DEFAULT_MAXIMUM_KEYS,
  type HedgeConfig,
  type LimitConfig,
  type Policy,
  PolicyConfigError,
  type PolicyOptions,
  resolveBreakerSettings,
  type ResolvedBreakerSettings,
  type ResolvedHedgeSettings,
  type ResolvedLimitSettings,
  type RetryBudgetOptions,
  Saturation,
  type SlidingWindowBudgetOptions,
  validateBudgetOptions,
  validateSlidingWindowOptions,
} from '../core/index.js';
import { BOUND_RULE, DELAY_RULE } from '../core/internal.js';
import type { ClassifierConfig, ClassifierSpec } from './classifier-config.js';
import {
  Problems,
  checkKeys,
  checkName,
  join,
  readDuration,
  readObject,
} from './config-reading.js';
import { type Section, isWindow, parseSection } from './policy-section.js';
import { type PresetName, PRESET_NAMES, presetPolicy } from './presets.js';
import { ResilienceConfigError } from './resilience-config.error.js';

/**
 * A duration in config: a number of milliseconds (`250`) or a string the `ms` package reads
 * (`"250ms"`, `"10s"`, `"2m"`, `"1.5h"`; a bare `"250"` is milliseconds).
 */
export type DurationConfig = number | string;

/** Backoff in config. `type` defaults to `'exponential'`; durations per {@link DurationConfig}. */
export type BackoffConfig =
  | {
      type?: 'exponential';
      /** Base delay after a Transient failure. Default 100 ms. */
      transientBase?: DurationConfig;
      /** Base delay after a Throttled failure without pushback. Default 1 s. */
      throttledBase?: DurationConfig;
      /** Growth per retry, a finite number >= 1. Default 2. */
      factor?: number;
      /** Cap of every delay (server pushback included). Default 30 s. */
      maximumDelay?: DurationConfig;
      /** Jitter applied to each delay. Default `'full'`. */
      jitter?: 'full' | 'equal' | 'none';
    }
  | {
      /**
       * Exponential, its transient base measured (`Backoff.measured`): `multiple` (1) × the
       * `quantile` (0.5, at most 0.5) of successful attempts over 5 minutes once 20 were seen,
       * within `spread` (10) either side of `transientBase`; the exponential keys as above.
       */
      type: 'measured';
      transientBase?: DurationConfig;
      throttledBase?: DurationConfig;
      factor?: number;
      maximumDelay?: DurationConfig;
      jitter?: 'full' | 'equal' | 'none';
      /** The base as a multiple of the latency quantile, > 0. Default 1. */
      multiple?: number;
      /** The quantile of successful attempt durations, in (0, 0.5]. Default 0.5. */
      quantile?: number;
      /** How far the base may move from `transientBase`, either way, a factor >= 1. Default 10. */
      spread?: number;
    }
  | { type: 'constant'; /** The delay before every retry, >= 0. */ delay: DurationConfig }
  | { type: 'none' };

/**
 * Retry budget in config:
 * - `true` or `{}` (or leaving it out): a token bucket with the defaults (fraction 0.1, floor 3/s);
 * - `{ fraction, minimumPerSecond }`: a bucket with those parameters (fraction in [0, 1], floor >= 0 tokens/s);
 * - `{ shared: 'name', ... }`: one bucket shared by every policy of the same registry naming it (all of
 *   them must give the same parameters);
 * - `false` or `'none'`: no budget (retries limited by `attempts` only).
 */
export type BudgetConfig =
  | boolean
  | 'none'
  | { fraction?: number; minimumPerSecond?: number; shared?: string }
  | { retryRatio?: number; samplingDuration?: DurationConfig; minimumThroughput?: number };

export { PRESET_NAMES, type PresetName, presetPolicy } from './presets.js';

/**
 * One named policy as plain JSON. Every field is optional; unset fields come from `defaults`, then from
 * the preset. Unknown keys are rejected.
 */
export interface PolicyConfig {
  /**
   * Starting point: `'default'` (3 attempts, exponential backoff, budget, no deadline), `'http'` (adds
   * a 30 s deadline, a breaker and `Classifier.http`) or `'conservative'` (2 attempts, budget, a breaker
   * floored at a 50 % failure ratio, `Classifier.http`). Default `'default'`.
   */
  preset?: PresetName;
  /**
   * Start from a preset (`'http'`, like `preset`) or from another policy of this config: its settings
   * (after its own `extends`) apply first, then this policy's, key by key as `defaults` merge.
   * `defaults` stay underneath both. Not with `preset`; cycles are refused.
   */
  extends?: string;
  /** Total attempts including the first, an integer >= 1. */
  attempts?: number;
  /** Restarts of a checkpointed stream after mid-stream failures, an integer in [0, 100]. Default 3. */
  restarts?: number;
  /** Bound on the whole call, > 0; `null` removes a bound set by the preset or `defaults`. */
  deadline?: DurationConfig | null;
  /** Bound on each attempt, > 0; `null` removes a bound set by `defaults`. */
  attemptTimeout?: DurationConfig | null;
  /** Bound calls also by the inbound caller's remaining time (the tighter wins; DESIGN §3.9). Default false. */
  useAmbientDeadline?: boolean;
  /** Apply the ambient criticality's budget rule: sheddable work retries only while half the budget remains (DESIGN §3.5). Default false. */
  useAmbientCriticality?: boolean;
  /** Delay curve between attempts. */
  backoff?: BackoffConfig;
  /** How retries are funded. */
  budget?: BudgetConfig;
  /** Circuit breaker: `true` (defaults), `false` (none), or settings (durations as ms or strings). The `http` preset has one. */
  breaker?: BreakerConfig;
  /** Keyed use through `handle.for(key)` (per tenant, shard, channel): `true`, `{ maximumKeys }` or `false` (default). See {@link ScopeConfig}. */
  scope?: ScopeConfig;
  /**
   * How outcomes become verdicts: `'default'`, `'http'`, `'grpc'`, or simple rules by error name, code or HTTP
   * status over a base (see {@link ClassifierConfig}). A policy's own replaces the one in `defaults`.
   * Default: the preset's (`http`, `conservative`: `'http'`).
   */
  classifier?: ClassifierConfig;
  /**
   * Bounds the attempts in flight at once (DESIGN §3.8): `{ concurrency: 20, queue: 50 }` (a bulkhead),
   * `{ adaptive: { initial?, minimum?, maximum? }, queue? }` (`adaptive: true` for the defaults 20 / 1 /
   * 200), or `false` (none, the default of every preset). The limiter is pinned to the name: a reload
   * resizes it live, keeping the calls in flight. A keyed use (`scope`, HTTP per host) gets one per key.
   */
  limit?: LimitConfig | false;
  /**
   * Hedging (DESIGN §3.8): `{ quantile: 0.95, maximumConcurrent?: 2, suppressAt?: 0.5, winRate? }` —
   * a repeatable call's next attempt starts when the running one outlasts the live `quantile` of
   * recent successful latency — or `false` (none, the default of every preset). What it has learnt is
   * pinned to the name: a reload keeps it. A policy's own replaces the one in `defaults`.
   */
  hedge?: HedgeConfig | false;
  /** Every call of this policy is safe to send twice at once (hedging applies to it). Default false; the HTTP and gRPC clients decide per request. */
  repeatable?: boolean;
  /**
   * `Saturation.above(n)`: while the event loop's delay is above `n` × its normal (and above 20 ms),
   * measured terms stop learning; a finite number > 1, or `false` (off, the default).
   */
  saturation?: number | false;
  /**
   * The measured attempt ceiling (DESIGN §3.7): `true` (3 × the p95 of successful attempts over 5
   * minutes, once 100 were seen), `{ multiple?: 3, quantile?: 0.95 }`, or `false` (none). It only ever
   * tightens an attempt's bound. The `http` preset has it on. What it measured is pinned to the name:
   * a reload keeps it.
   */
  attemptCeiling?: boolean | { multiple?: number; quantile?: number };
  /**
   * Whether the measured terms are in force (the attempt ceiling, a measured backoff base, the hedge
   * threshold, the saturation probe). `false` turns them off and refuses `hedge` and `saturation`.
   * Default true.
   */
  adaptive?: boolean;
}

/**
 * Circuit breaker in config (DESIGN §3.6): `true` for every default, `false` for none, or an object of
 * breaker settings over the defaults, whose durations (`breakDuration`, `maximumBreak`, `tripWindow`,
 * `baselineWindow`, `probeTimeout`) are ms numbers or strings such as `"15s"`.
 */
export type BreakerConfig =
  | boolean
  | (Omit<BreakerSettings, BreakerDurationKey> &
      Partial<Record<BreakerDurationKey, DurationConfig>>);

/** The breaker settings that are durations, so config may write them as `"15s"` strings. */
export type BreakerDurationKey =
  'breakDuration' | 'maximumBreak' | 'tripWindow' | 'baselineWindow' | 'probeTimeout';

/**
 * Keyed use of a policy in config (DESIGN §3.11): `true` for a `PolicyScope` of at most 1024 keys,
 * `{ maximumKeys: n }` (an integer >= 1) to size it, `false` (the default) for none. Each key
 * (`handle.for(key)`) gets its own breaker and its own retry-budget bucket with the policy's settings;
 * a `budget.shared` bucket stays shared by every key. Beyond `maximumKeys` the least recently used keys
 * are evicted (approximately) and start fresh when they return. Memory: ≈ 15 KB per key with a breaker
 * at the default windows (≈ 15 MB for 1024 keys), ≈ 0.4 KB per key without.
 */
export type ScopeConfig = boolean | { maximumKeys?: number };

/**
 * The reloadable part of the resilience configuration: named policies and the defaults merged under
 * each of them. `defaults` merge field by field; `backoff` objects merge key by key when their `type`
 * is the same (otherwise the policy's replaces the default's); `budget` objects merge key by key
 * (a boolean or `'none'` replaces).
 */
export interface ResilienceConfig {
  /** Policies by name (`@Resilient('payments')`, `@InjectPolicy('payments')`). */
  policies: Record<string, PolicyConfig>;
  /** Settings merged under every policy. */
  defaults?: PolicyConfig;
}

/** How a validated policy funds its retries; the registry turns this into a pinned bucket. */
export type BudgetPlan =
  | { readonly kind: 'none' }
  | { readonly kind: 'private'; readonly options: Required<RetryBudgetOptions> }
  | {
      readonly kind: 'shared';
      readonly sharedName: string;
      readonly options: Required<RetryBudgetOptions>;
    }
  | { readonly kind: 'window'; readonly options: Required<SlidingWindowBudgetOptions> };

/** One validated policy: its preset, the option changes to apply, and its budget plan. */
export interface PolicyPlan {
  /** The registration name. */
  readonly name: string;
  /** The preset policy the changes apply to. */
  readonly preset: Policy;
  /** Its name. */
  readonly presetName: PresetName;
  /** The policies this one extends, nearest first (`[]` when it extends none). */
  readonly extends: readonly string[];
  /** Validated changes (attempts, deadline, attemptTimeout, backoff); never name, budget, clock or random. */
  readonly changes: PolicyOptions;
  /** The budget to pin to the name. */
  readonly budget: BudgetPlan;
  /** The breaker settings to pin to the name, or `undefined` for none. */
  readonly breaker: ResolvedBreakerSettings | undefined;
  /** Keyed use (`handle.for(key)`), or `undefined` when the policy is not scoped. */
  readonly scope: { readonly maximumKeys: number } | undefined;
  /** The configured classifier, or `undefined` for the preset's. */
  readonly classifier?: ClassifierSpec;
  /** The limit to pin to the name, or `undefined` for none. */
  readonly limit?: ResolvedLimitSettings;
  /** The hedge to pin to the name, or `undefined` for none. */
  readonly hedge?: ResolvedHedgeSettings;
  /** The attempt ceiling to pin to the name (its measurements), or `undefined` for none. */
  readonly attemptCeiling?: ResolvedCeilingSettings;
}

/** A validated configuration: one plan per policy name, in config order. */
export interface ParsedResilienceConfig {
  readonly policies: ReadonlyMap<string, PolicyPlan>;
}

const CONFIG_KEYS = ['policies', 'defaults'] as const;

/**
 * Reads a duration from config: a number of milliseconds or a string the `ms` package understands.
 * @param value the config value
 * @param field the dotted path used in the error
 * @param options `positive: true` requires > 0 (the rule of `deadline`); otherwise >= 0 (of a delay)
 * @returns milliseconds (finite)
 * @throws PolicyConfigError naming `field`, the value and the rule for anything else (negative, NaN,
 *   Infinity, strings the `ms` package cannot read such as `"soon"` or `"ten seconds"`).
 */
export function parseDuration(
  value: unknown,
  field: string,
  options: { positive?: boolean } = {},
): number {
  const problems = new Problems();
  const result = readDuration(problems, value, field, options.positive ? BOUND_RULE : DELAY_RULE);
  if (result === undefined) throw problems.list[0];
  return result;
}

function merge(defaults: Section, own: Section): Section {
  const merged: Section = { ...defaults };
  for (const [key, value] of Object.entries(own) as [keyof Section, unknown][]) {
    if (value !== undefined) (merged as Record<string, unknown>)[key] = value;
  }
  const [db, ob] = [defaults.backoff, own.backoff];
  if (db?.type === 'exponential' && ob?.type === 'exponential')
    merged.backoff = { type: 'exponential', options: { ...db.options, ...ob.options } };
  else if (db?.type === 'measured' && ob?.type === 'measured')
    merged.backoff = { type: 'measured', options: { ...db.options, ...ob.options } };
  const [dg, og] = [defaults.budget, own.budget];
  // Same shape: key by key; another shape replaces (a window over a bucket default, or the reverse).
  if (
    dg &&
    og &&
    (isWindow(dg) === isWindow(og) || Object.keys(dg).length === 0 || Object.keys(og).length === 0)
  )
    merged.budget = { ...dg, ...og };
  const [dk, ok] = [defaults.breaker, own.breaker];
  if (typeof dk === 'object' && typeof ok === 'object') merged.breaker = { ...dk, ...ok };
  const [ds, os] = [defaults.scope, own.scope];
  if (ds && os) merged.scope = { ...ds, ...os };
  return merged;
}

function buildPlan(
  problems: Problems,
  name: string,
  section: Section,
  path: string,
  chain: readonly string[],
): PolicyPlan | undefined {
  const presetName = section.preset ?? 'default';
  const preset = presetPolicy(presetName);
  const changes: PolicyOptions = {};
  if (section.attempts !== undefined) changes.attempts = section.attempts;
  if (section.restarts !== undefined) changes.restarts = section.restarts;
  // null removes a bound the preset or defaults set; undefined keeps the preset's.
  if (section.deadline !== undefined) changes.deadline = section.deadline ?? undefined;
  if (section.attemptTimeout !== undefined)
    changes.attemptTimeout = section.attemptTimeout ?? undefined;
  if (section.useAmbientDeadline !== undefined)
    changes.useAmbientDeadline = section.useAmbientDeadline;
  if (section.useAmbientCriticality !== undefined)
    changes.useAmbientCriticality = section.useAmbientCriticality;
  if (section.repeatable !== undefined) changes.repeatable = section.repeatable;
  if (section.adaptive !== undefined) changes.adaptive = section.adaptive;
  if (section.saturation !== undefined)
    changes.saturation =
      section.saturation === false ? undefined : Saturation.above(section.saturation);
  // Every field passed the core's own rule when its section was read: nothing here can be refused.
  const backoff = section.backoff;
  if (backoff?.type === 'exponential') changes.backoff = Backoff.exponential(backoff.options);
  else if (backoff?.type === 'measured') changes.backoff = Backoff.measured(backoff.options);
  else if (backoff?.type === 'constant') changes.backoff = Backoff.constant(backoff.delay);
  else if (backoff?.type === 'none') changes.backoff = Backoff.none;
  let budget: BudgetPlan;
  if (section.budget === false) budget = { kind: 'none' };
  else if (isWindow(section.budget ?? {})) {
    const { retryRatio, samplingDuration, minimumThroughput } = section.budget!;
    budget = {
      kind: 'window',
      options: validateSlidingWindowOptions({ retryRatio, samplingDuration, minimumThroughput }),
    };
  } else {
    const options = validateBudgetOptions({
      fraction: section.budget?.fraction,
      minimumPerSecond: section.budget?.minimumPerSecond,
    });
    const sharedName = section.budget?.shared;
    budget =
      sharedName === undefined
        ? { kind: 'private', options }
        : { kind: 'shared', sharedName, options };
  }
  let breaker: ResolvedBreakerSettings | undefined;
  if (section.breaker === undefined) breaker = preset.options.breaker?.settings;
  else if (section.breaker === true) breaker = BREAKER_DEFAULTS;
  else if (section.breaker !== false) {
    try {
      breaker = resolveBreakerSettings(section.breaker, join(path, 'breaker'));
    } catch (error) {
      // A merge of defaults and own settings can break a cross-field rule (maximumBreak >= breakDuration).
      if (error instanceof PolicyConfigError)
        return problems.add(error.field, error.value, error.rule);
      throw error;
    }
  }
  const scope = section.scope
    ? { maximumKeys: section.scope.maximumKeys ?? DEFAULT_MAXIMUM_KEYS }
    : undefined;
  const limit = section.limit === undefined || section.limit === false ? undefined : section.limit;
  const hedge = section.hedge === undefined || section.hedge === false ? undefined : section.hedge;
  const attemptCeiling =
    section.attemptCeiling === undefined
      ? preset.options.attemptCeiling?.settings
      : section.attemptCeiling === false
        ? undefined
        : section.attemptCeiling;
  if (section.adaptive === false || (section.adaptive === undefined && !preset.options.adaptive)) {
    // adaptive: false turns the measured terms off: a hedge or a saturation guard would act on none.
    const refused =
      hedge !== undefined
        ? (['hedge', hedge] as const)
        : changes.saturation !== undefined
          ? (['saturation', section.saturation] as const)
          : undefined;
    if (refused !== undefined)
      return problems.add(
        join(path, refused[0]),
        refused[1],
        'must be left out when adaptive is false (it acts on measured terms, which adaptive: false turns off)',
      );
  }
  return {
    name,
    preset,
    presetName,
    extends: chain,
    changes,
    budget,
    breaker,
    scope,
    classifier: section.classifier,
    limit,
    hedge,
    attemptCeiling,
  };
}

/**
 * Whether breaker settings hold together on their own (the cross-field rules: `maximumBreak` >=
 * `breakDuration`, `baselineWindow` within its range of `tripWindow`), over the library's defaults;
 * the problem is recorded at `path` when they do not.
 */
function breakerHolds(
  problems: Problems,
  settings: Readonly<Record<string, unknown>>,
  path: string,
): boolean {
  try {
    resolveBreakerSettings(settings, path);
    return true;
  } catch (error) {
    if (!(error instanceof PolicyConfigError)) throw error;
    problems.add(error.field, error.value, error.rule);
    return false;
  }
}

/**
 * A policy's own section with what it extends applied underneath (nearest ancestor last to apply),
 * memoized in `resolved`; `undefined` when it or an ancestor is invalid (reported once, where it is).
 */
function resolveExtends(
  problems: Problems,
  name: string,
  sections: ReadonlyMap<string, Section>,
  names: readonly string[],
  resolved: Map<string, { section: Section; chain: string[] } | undefined>,
  visiting: readonly string[],
): { section: Section; chain: string[] } | undefined {
  if (resolved.has(name)) return resolved.get(name);
  const own = sections.get(name);
  let result: { section: Section; chain: string[] } | undefined;
  const target = own?.extends;
  if (own === undefined) result = undefined;
  else if (target === undefined) result = { section: own, chain: [] };
  else if (PRESET_NAMES.includes(target as PresetName) && !sections.has(target))
    result = { section: { ...own, extends: undefined, preset: target as PresetName }, chain: [] };
  else if (visiting.includes(target) || target === name) {
    problems.add(
      `${join('policies', name)}.extends`,
      target,
      `forms a cycle: ${[...visiting.slice(visiting.indexOf(target)), name, target].join(' -> ')}`,
    );
  } else if (!names.includes(target)) {
    problems.add(
      `${join('policies', name)}.extends`,
      target,
      `must be a preset (${PRESET_NAMES.join(', ')}) or the name of another policy (${names.filter((n) => n !== name).join(', ') || 'none'})`,
    );
  } else {
    const parent = resolveExtends(problems, target, sections, names, resolved, [...visiting, name]);
    if (parent !== undefined)
      result = {
        section: merge(parent.section, { ...own, extends: undefined }),
        chain: [target, ...parent.chain],
      };
  }
  resolved.set(name, result);
  return result;
}

/**
 * Validates a {@link ResilienceConfig} completely and turns it into one plan per policy.
 * Every problem is collected (unknown keys, wrong types, out-of-range values, conflicting shared
 * budgets), each named by its full path from the config root — `policies.payments.budget.fraction`,
 * `defaults.attempts` — so one run shows everything to fix. A problem in `defaults` is reported once,
 * at its `defaults.` path.
 * @param config the plain JSON config (`{ policies, defaults? }`): plain objects only, read by their own
 *   properties; `null` is refused wherever a value is expected (it means "no bound" only for
 *   `deadline` and `attemptTimeout`); `__proto__`, `constructor` and `prototype` are refused as names
 * @throws ResilienceConfigError listing every problem when anything is invalid.
 */
export function parseResilienceConfig(config: unknown): ParsedResilienceConfig {
  const problems = new Problems();
  const policies = new Map<string, PolicyPlan>();
  const root = readObject(problems, config, 'config', 'must be an object { policies, defaults? }');
  if (root === undefined) throw new ResilienceConfigError(problems.list);
  checkKeys(problems, root, '', CONFIG_KEYS, 'resilience config');
  const defaults =
    root.defaults === undefined ? {} : (parseSection(problems, root.defaults, 'defaults') ?? {});
  if (
    typeof defaults.breaker === 'object' &&
    !breakerHolds(problems, defaults.breaker, 'defaults.breaker')
  ) {
    // Reported once, where it is written: the policies inheriting it would each report it again.
    delete defaults.breaker;
  }
  const raw =
    root.policies === undefined
      ? undefined
      : readObject(
          problems,
          root.policies,
          'policies',
          'must be an object of named policies, e.g. { "payments": { "attempts": 3 } }',
        );
  if (root.policies === undefined)
    problems.add(
      'policies',
      undefined,
      'must be an object of named policies, e.g. { "payments": { "attempts": 3 } }',
    );
  if (raw !== undefined) {
    const shared = new Map<string, { path: string; options: Required<RetryBudgetOptions> }>();
    const sections = new Map<string, Section>();
    for (const [name, value] of Object.entries(raw)) {
      if (checkName(problems, name, join('policies', name), 'policy')) {
        const own = parseSection(problems, value, join('policies', name));
        if (own !== undefined) sections.set(name, own);
      }
    }
    const resolved = new Map<string, { section: Section; chain: string[] } | undefined>();
    for (const name of sections.keys()) {
      const path = join('policies', name);
      const own = resolveExtends(problems, name, sections, Object.keys(raw), resolved, []);
      if (own === undefined) continue;
      const plan = buildPlan(problems, name, merge(defaults, own.section), path, own.chain);
      if (plan === undefined) continue;
      if (plan.budget.kind === 'shared') {
        const first = shared.get(plan.budget.sharedName);
        if (first === undefined)
          shared.set(plan.budget.sharedName, { path, options: plan.budget.options });
        else if (
          first.options.fraction !== plan.budget.options.fraction ||
          first.options.minimumPerSecond !== plan.budget.options.minimumPerSecond
        ) {
          problems.add(
            `${path}.budget`,
            { shared: plan.budget.sharedName, ...plan.budget.options },
            `conflicts with ${first.path}.budget ${JSON.stringify(first.options)}: every policy sharing budget "${plan.budget.sharedName}" must give the same fraction and minimumPerSecond`,
          );
          continue;
        }
      }
      policies.set(name, plan);
    }
  }
  if (problems.list.length > 0) throw new ResilienceConfigError(problems.list);
  return { policies };
}
