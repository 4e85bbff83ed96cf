import {
  AttemptCeiling,
  breakerSettingProblems,
  type ExponentialBackoffOptions,
  Hedge,
  type MeasuredBackoffOptions,
  type ResolvedCeilingSettings,
  Limit,
  PolicyConfigError,
  type ResolvedHedgeSettings,
  type ResolvedLimitSettings,
} from '../core/index.js';
import {
  ATTEMPTS_RULE,
  BOOLEAN_RULE,
  RESTARTS_RULE,
  BREAKER_DURATION_KEYS,
  BREAKER_RULES,
  BUCKET_RULES,
  CALL_BOUND_RULE,
  DELAY_RULE,
  JITTER_NAME_RULE,
  MAXIMUM_KEYS_RULE,
  MEASURED_BACKOFF_RULES,
  MULTIPLIER_RULE,
  NAME_RULE,
  RATE_RULES,
  SATURATION_RULE,
  WINDOW_RULES,
  isPlainObject,
} from '../core/internal.js';
import { type ClassifierSpec, parseClassifier } from './classifier-config.js';
import { Problems, checkKeys, join, readDuration, readObject } from './config-reading.js';
import { PRESET_NAMES, type PresetName } from './presets.js';

/**
 * Policy options that are code and have no config key, with what the error says instead of "not a
 * known key": the config may refer to no code (DESIGN §3.8).
 */
const CODE_ONLY: Readonly<Record<string, string>> = Object.freeze({
  fallback:
    "is code, not config: policy.with({ fallback: (stop) => value }), or @Resilient(name, { fallback: 'method' }) in Nest",
});

/** The keys a policy section (`defaults`, `policies.<name>`) may hold. */
export const POLICY_KEYS = [
  'preset',
  'extends',
  'attempts',
  'deadline',
  'attemptTimeout',
  'backoff',
  'budget',
  'breaker',
  'scope',
  'useAmbientDeadline',
  'useAmbientCriticality',
  'classifier',
  'limit',
  'hedge',
  'repeatable',
  'saturation',
  'attemptCeiling',
  'adaptive',
  'restarts',
] as const;
const EXPONENTIAL_KEYS = [
  'type',
  'transientBase',
  'throttledBase',
  'factor',
  'maximumDelay',
  'jitter',
] as const;
const MEASURED_KEYS = [...EXPONENTIAL_KEYS, 'multiple', 'quantile', 'spread'] as const;
const BUCKET_KEYS = ['fraction', 'minimumPerSecond', 'shared'] as const;
const WINDOW_KEYS = ['retryRatio', 'samplingDuration', 'minimumThroughput'] as const;
const BUDGET_KEYS = [...BUCKET_KEYS, ...WINDOW_KEYS] as const;
const BACKOFF_SHAPE =
  "must be an object: { type?: 'exponential', transientBase?, throttledBase?, factor?, maximumDelay?, jitter? }, { type: 'measured', multiple?, quantile?, spread?, …the exponential keys }, { type: 'constant', delay } or { type: 'none' }";
const BUDGET_SHAPE =
  "must be true, false, 'none', a token bucket { fraction?, minimumPerSecond?, shared? } or a sliding window { retryRatio?, samplingDuration?, minimumThroughput? }";

/** A validated policy section (one of `defaults` or `policies.<name>`), before merging; durations in ms. */
export interface Section {
  preset?: PresetName;
  extends?: string;
  attempts?: number;
  restarts?: number;
  deadline?: number | null;
  attemptTimeout?: number | null;
  useAmbientDeadline?: boolean;
  useAmbientCriticality?: boolean;
  backoff?:
    | { type: 'exponential'; options: ExponentialBackoffOptions }
    | { type: 'measured'; options: MeasuredBackoffOptions }
    | { type: 'constant'; delay: number }
    | { type: 'none' };
  budget?: false | BudgetSection;
  /** `true`/`false`, or settings whose every field passed its rule (the rules relating fields are checked once merged). */
  breaker?: boolean | Record<string, unknown>;
  scope?: false | { maximumKeys?: number };
  classifier?: ClassifierSpec;
  /** `false` (none) or the validated limit settings. */
  limit?: false | ResolvedLimitSettings;
  /** `false` (none) or the validated hedge settings. */
  hedge?: false | ResolvedHedgeSettings;
  repeatable?: boolean;
  /** `false` (off) or the multiple of the event loop's normal delay. */
  saturation?: false | number;
  /** `false` (none) or the validated attempt-ceiling settings. */
  attemptCeiling?: false | ResolvedCeilingSettings;
  adaptive?: boolean;
}

/** A budget section: token-bucket keys or sliding-window keys (never both). */
export interface BudgetSection {
  fraction?: number;
  minimumPerSecond?: number;
  shared?: string;
  retryRatio?: number;
  samplingDuration?: number;
  minimumThroughput?: number;
}

/** Whether a budget section is of the sliding-window shape. */
export function isWindow(budget: BudgetSection): boolean {
  return WINDOW_KEYS.some((key) => budget[key] !== undefined);
}

/**
 * Reads one policy section field by field against the core's rules, recording every problem at its
 * path; `undefined` when the section is not a plain object.
 */
export function parseSection(
  problems: Problems,
  value: unknown,
  path: string,
): Section | undefined {
  const fields = readObject(
    problems,
    value,
    path,
    `must be an object with the policy keys (${POLICY_KEYS.join(', ')})`,
  );
  if (fields === undefined) return undefined;
  checkKeys(problems, fields, path, POLICY_KEYS, 'policy', CODE_ONLY);
  const section: Section = {};
  const at = (key: string) => join(path, key);
  if (fields.preset !== undefined) {
    if (!PRESET_NAMES.includes(fields.preset as PresetName))
      problems.add(at('preset'), fields.preset, `must be one of ${PRESET_NAMES.join(', ')}`);
    else section.preset = fields.preset as PresetName;
  }
  if (fields.extends !== undefined) {
    if (typeof fields.extends !== 'string' || fields.extends.trim().length === 0) {
      problems.add(
        at('extends'),
        fields.extends,
        `must be a preset (${PRESET_NAMES.join(', ')}) or the name of another policy`,
      );
    } else if (fields.preset !== undefined) {
      problems.add(
        at('extends'),
        fields.extends,
        'cannot be given with preset: extends names the starting point',
      );
    } else section.extends = fields.extends;
  }
  if (fields.attempts !== undefined)
    section.attempts = problems.check(ATTEMPTS_RULE, at('attempts'), fields.attempts);
  if (fields.restarts !== undefined)
    section.restarts = problems.check(RESTARTS_RULE, at('restarts'), fields.restarts);
  for (const key of ['deadline', 'attemptTimeout'] as const) {
    // null is this field's documented way to remove a bound the preset or defaults set.
    if (fields[key] === null) section[key] = null;
    // Infinity (YAML `.inf`) says "no bound" as null does; 0 is refused.
    else if (fields[key] !== undefined)
      section[key] = readDuration(problems, fields[key], at(key), CALL_BOUND_RULE);
  }
  for (const key of [
    'useAmbientDeadline',
    'useAmbientCriticality',
    'repeatable',
    'adaptive',
  ] as const) {
    if (fields[key] !== undefined)
      section[key] = problems.check(BOOLEAN_RULE, at(key), fields[key]);
  }
  if (fields.backoff !== undefined)
    section.backoff = parseBackoff(problems, fields.backoff, at('backoff'));
  if (fields.budget !== undefined)
    section.budget = parseBudget(problems, fields.budget, at('budget'));
  if (fields.breaker !== undefined)
    section.breaker = parseBreaker(problems, fields.breaker, at('breaker'));
  if (fields.scope !== undefined) section.scope = parseScope(problems, fields.scope, at('scope'));
  if (fields.limit !== undefined) section.limit = parseLimit(problems, fields.limit, at('limit'));
  if (fields.hedge !== undefined) section.hedge = parseHedge(problems, fields.hedge, at('hedge'));
  if (fields.attemptCeiling !== undefined)
    section.attemptCeiling = parseCeiling(problems, fields.attemptCeiling, at('attemptCeiling'));
  if (fields.saturation !== undefined) {
    section.saturation =
      fields.saturation === false
        ? false
        : problems.check(SATURATION_RULE, at('saturation'), fields.saturation);
  }
  if (fields.classifier !== undefined) {
    const read = parseClassifier(fields.classifier, at('classifier'));
    if ('spec' in read) section.classifier = read.spec;
    else problems.addAll(read.problems);
  }
  return section;
}

function parseBackoff(problems: Problems, value: unknown, path: string): Section['backoff'] {
  const fields = readObject(problems, value, path, BACKOFF_SHAPE);
  if (fields === undefined) return undefined;
  const type = fields.type === undefined ? 'exponential' : fields.type;
  if (type === 'none') {
    checkKeys(problems, fields, path, ['type'], "backoff { type: 'none' }");
    return { type: 'none' };
  }
  if (type === 'constant') {
    checkKeys(problems, fields, path, ['type', 'delay'], "backoff { type: 'constant' }");
    if (fields.delay === undefined)
      return problems.add(
        join(path, 'delay'),
        undefined,
        `is required for a constant backoff: ${DELAY_RULE.rule.replace(/^must be /, '')}`,
      );
    const delay = readDuration(problems, fields.delay, join(path, 'delay'), DELAY_RULE);
    return delay === undefined ? undefined : { type: 'constant', delay };
  }
  if (type !== 'exponential' && type !== 'measured')
    return problems.add(
      join(path, 'type'),
      type,
      "must be 'exponential', 'measured', 'constant' or 'none'",
    );
  const measured = type === 'measured';
  checkKeys(
    problems,
    fields,
    path,
    measured ? MEASURED_KEYS : EXPONENTIAL_KEYS,
    measured ? 'measured backoff' : 'exponential backoff',
  );
  const options: MeasuredBackoffOptions = {};
  if (measured) {
    for (const key of ['multiple', 'quantile', 'spread'] as const) {
      if (fields[key] !== undefined)
        options[key] = problems.check(MEASURED_BACKOFF_RULES[key], join(path, key), fields[key]);
    }
  }
  for (const key of ['transientBase', 'throttledBase', 'maximumDelay'] as const) {
    if (fields[key] !== undefined)
      options[key] = readDuration(problems, fields[key], join(path, key), DELAY_RULE);
  }
  if (fields.factor !== undefined)
    options.factor = problems.check(MULTIPLIER_RULE, join(path, 'factor'), fields.factor);
  if (fields.jitter !== undefined)
    options.jitter = problems.check(JITTER_NAME_RULE, join(path, 'jitter'), fields.jitter);
  return measured ? { type: 'measured', options } : { type: 'exponential', options };
}

/** Reads the attempt-ceiling section (`true`, `{ multiple?, quantile? }` or `false`) with the core's rules. */
function parseCeiling(problems: Problems, value: unknown, path: string): Section['attemptCeiling'] {
  try {
    return AttemptCeiling.settingsFrom(value, path) ?? false;
  } catch (error) {
    if (error instanceof PolicyConfigError)
      return problems.add(error.field, error.value, error.rule);
    throw error;
  }
}

function parseBudget(problems: Problems, value: unknown, path: string): Section['budget'] {
  if (value === false || value === 'none') return false;
  if (value === true) return {};
  const fields = readObject(problems, value, path, BUDGET_SHAPE);
  if (fields === undefined) return undefined;
  checkKeys(problems, fields, path, BUDGET_KEYS, 'budget');
  const budget: BudgetSection = {};
  for (const key of ['fraction', 'minimumPerSecond'] as const) {
    if (fields[key] !== undefined)
      budget[key] = problems.check(BUCKET_RULES[key], join(path, key), fields[key]);
  }
  if (fields.shared !== undefined)
    budget.shared = problems.check(NAME_RULE, join(path, 'shared'), fields.shared);
  if (fields.retryRatio !== undefined)
    budget.retryRatio = problems.check(
      WINDOW_RULES.retryRatio,
      join(path, 'retryRatio'),
      fields.retryRatio,
    );
  if (fields.samplingDuration !== undefined)
    budget.samplingDuration = readDuration(
      problems,
      fields.samplingDuration,
      join(path, 'samplingDuration'),
      WINDOW_RULES.samplingDuration,
    );
  if (fields.minimumThroughput !== undefined)
    budget.minimumThroughput = problems.check(
      WINDOW_RULES.minimumThroughput,
      join(path, 'minimumThroughput'),
      fields.minimumThroughput,
    );
  const bucketKeys = BUCKET_KEYS.filter((key) => fields[key] !== undefined);
  if (bucketKeys.length > 0 && WINDOW_KEYS.some((key) => fields[key] !== undefined)) {
    return problems.add(
      path,
      value,
      `mixes token-bucket keys (${bucketKeys.join(', ')}) with sliding-window keys (${WINDOW_KEYS.join(', ')}): choose one shape`,
    );
  }
  return budget;
}

/** Reads the breaker section: booleans as they are, settings with durations converted to ms and each field checked. */
function parseBreaker(problems: Problems, value: unknown, path: string): Section['breaker'] {
  if (typeof value === 'boolean') return value;
  const settings = readObject(
    problems,
    value,
    path,
    'must be true, false or an object of breaker settings',
  );
  if (settings === undefined) return undefined;
  const before = problems.list.length;
  for (const key of BREAKER_DURATION_KEYS) {
    if (settings[key] === undefined) continue;
    const ms = readDuration(problems, settings[key], join(path, key), BREAKER_RULES[key]);
    // Reported once, here: the field check below skips it.
    if (ms === undefined) delete settings[key];
    else settings[key] = ms;
  }
  problems.addAll(breakerSettingProblems(settings, path));
  return problems.list.length === before ? settings : undefined;
}

/** Reads the scope section: `true` → `{}`, `false` → not scoped, `{ maximumKeys }` checked. */
function parseScope(problems: Problems, value: unknown, path: string): Section['scope'] {
  if (value === false) return false;
  if (value === true) return {};
  const fields = readObject(
    problems,
    value,
    path,
    'must be true, false or an object { maximumKeys? }',
  );
  if (fields === undefined) return undefined;
  checkKeys(problems, fields, path, ['maximumKeys'], 'scope');
  if (fields.maximumKeys === undefined) return {};
  const maximumKeys = problems.check(
    MAXIMUM_KEYS_RULE,
    join(path, 'maximumKeys'),
    fields.maximumKeys,
  );
  return maximumKeys === undefined ? undefined : { maximumKeys };
}

/** Reads the hedge section (`{ quantile, maximumConcurrent?, suppressAt?, winRate? }` or `false`) with the core's rules. */
function parseHedge(problems: Problems, value: unknown, path: string): Section['hedge'] {
  try {
    return Hedge.settingsFrom(value, path) ?? false;
  } catch (error) {
    if (error instanceof PolicyConfigError)
      return problems.add(error.field, error.value, error.rule);
    throw error;
  }
}

/**
 * Reads the limit section (`{ concurrency, queue? }`, `{ adaptive, queue? }`, `{ rate: { limit, per,
 * burst?, maximumWait?, shared?, key?, … } }` or `false`) with the core's rules; a rate's durations may
 * be strings (`'1s'`).
 */
function parseLimit(problems: Problems, value: unknown, path: string): Section['limit'] {
  let read = value;
  if (isPlainObject(value) && isPlainObject(value.rate)) {
    const rate: Record<string, unknown> = { ...value.rate };
    if (rate.store !== undefined)
      return problems.add(
        `${path}.rate.store`,
        rate.store,
        'cannot be written in config: a store is given in code (ResilienceModule.forRoot({ redis }) and rate.shared: true)',
      );
    for (const key of ['per', 'maximumWait', 'storeWait', 'storeTimeout'] as const) {
      if (rate[key] === undefined) continue;
      const ms = readDuration(problems, rate[key], `${path}.rate.${key}`, RATE_RULES[key]);
      if (ms === undefined) return undefined;
      rate[key] = ms;
    }
    read = { ...value, rate };
  }
  try {
    return Limit.settingsFrom(read, path) ?? false;
  } catch (error) {
    if (error instanceof PolicyConfigError)
      return problems.add(error.field, error.value, error.rule);
    throw error;
  }
}
