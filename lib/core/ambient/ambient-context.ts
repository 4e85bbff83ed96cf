import { AsyncLocalStorage } from 'node:async_hooks';
import { type Clock, SystemClock } from '../time/clock.js';
import { PolicyConfigError, rejectUnknownKeys } from '../errors.js';
import { BOOLEAN_RULE, SPAN_RULE } from '../rules/option-rules.js';
import { checkValue, oneOfRule } from '../rules/value-rule.js';

/**
 * How much a unit of work matters, lowest first (DESIGN §3.9): `sheddable < sheddablePlus < critical <
 * criticalPlus`. Unlabeled work is `critical`, never sheddable: a default that sheds loses requests in
 * the first incident after an upgrade.
 */
export type Criticality = 'sheddable' | 'sheddablePlus' | 'critical' | 'criticalPlus';

const LEVELS: readonly Criticality[] = ['sheddable', 'sheddablePlus', 'critical', 'criticalPlus'];
/** A criticality level of an ambient change. */
const CRITICALITY_RULE = oneOfRule(LEVELS, `must be one of ${LEVELS.join(', ')}`);
const BY_LOWER_NAME = new Map(LEVELS.map((level) => [level.toLowerCase(), level]));
// The wire also carries the kebab and snake spellings other stacks use (critical-plus, CRITICAL_PLUS).
const SEPARATORS = /[-_\s]/g;

/** Criticality levels and their wire form. */
export const Criticality = {
  sheddable: 'sheddable',
  sheddablePlus: 'sheddablePlus',
  critical: 'critical',
  criticalPlus: 'criticalPlus',
  /** Every level, lowest first. */
  levels: LEVELS,
  /** Position of `level` in `Criticality.levels` (0 = sheddable … 3 = criticalPlus). */
  rank(level: Criticality): number {
    return LEVELS.indexOf(level);
  },
  /**
   * Reads a level that arrived from another process (a header, gRPC metadata). Case and `-`/`_`
   * separators are ignored (`Sheddable-Plus`, `SHEDDABLE_PLUS`, `sheddablePlus` are one level). The
   * result is clamped at `critical`: a caller can never raise its own work to `criticalPlus`.
   * @returns the level, or `undefined` for an absent or unknown value (never throws)
   */
  fromWire(value: string | null | undefined): Criticality | undefined {
    if (typeof value !== 'string') return undefined;
    const level = BY_LOWER_NAME.get(value.trim().replace(SEPARATORS, '').toLowerCase());
    return level === 'criticalPlus' ? 'critical' : level;
  },
} as const;

/** What the ambient context holds for the code running inside it (DESIGN §3.9). */
export interface AmbientState {
  /**
   * When the inbound caller stops waiting, as a reading of {@link AmbientState.clock}; `Infinity` when
   * no caller deadline is known.
   */
  readonly deadlineAt: number;
  /** The clock {@link AmbientState.deadlineAt} is a reading of. */
  readonly clock: Clock;
  /** The work's criticality, `undefined` when unlabeled (which counts as `critical`). */
  readonly criticality: Criticality | undefined;
  /** True when the inbound request came from a client that will retry it (`X-NResilience-Retrying: 1`). */
  readonly nestedRetry: boolean;
  /** True inside `Ambient.singleShot(fn)`: calls made there make one attempt each. */
  readonly singleShot: boolean;
}

/** What {@link Ambient.run} changes for the code it runs; fields left out are inherited. */
export interface AmbientChanges {
  /**
   * Milliseconds the caller is still waiting, >= 0, counted from now. Only ever tightens: inside a
   * context that already has a nearer deadline, the nearer one stays.
   */
  remaining?: number;
  /** The work's criticality (replaces the inherited level; parse wire values with `Criticality.fromWire`). */
  criticality?: Criticality;
  /** Marks the work as running inside a retrying client; once set it is inherited and cannot be cleared. */
  nestedRetry?: boolean;
  /** Calls made inside make a single attempt; once set it is inherited and cannot be cleared. */
  singleShot?: boolean;
  /** Clock `remaining` counts on. Default the inherited context's clock, else `SystemClock.instance`. */
  clock?: Clock;
}

const CHANGE_KEYS = ['remaining', 'criticality', 'nestedRetry', 'singleShot', 'clock'];
const storage = new AsyncLocalStorage<AmbientState>();

/**
 * The one ambient context (an `AsyncLocalStorage` store) carrying, through every `await` of the work
 * it wraps, the facts an inbound request brings and a policy may honour: the caller's deadline, the
 * work's criticality, the nested-retry marker and single-shot scopes (DESIGN §3.9). Framework-free:
 * the Nest middleware and the gRPC server side fill it; policies with `useAmbientDeadline` read it.
 *
 * ```ts
 * await Ambient.run({ remaining: 800, criticality: 'sheddable' }, () => handler(request));
 * ```
 */
export const Ambient = {
  /** The state of the context the caller runs in, or `undefined` outside any. */
  current(): AmbientState | undefined {
    return storage.getStore();
  },

  /**
   * Runs `fn` inside a context made of the current one with `changes` applied, and returns what `fn`
   * returns (a promise keeps the context through its awaits).
   * @throws PolicyConfigError naming the field when `remaining` is not a number >= 0, `criticality`
   *   is not a level, a flag is not a boolean, or a key is unknown
   */
  run<T>(changes: AmbientChanges, fn: () => T): T {
    if (changes === null || typeof changes !== 'object')
      throw new PolicyConfigError('ambient', changes, 'must be an object of ambient changes');
    rejectUnknownKeys(changes, CHANGE_KEYS, 'ambient', 'ambient field');
    const { remaining, criticality, nestedRetry, singleShot } = changes;
    if (remaining !== undefined) checkValue(SPAN_RULE, 'ambient.remaining', remaining);
    if (criticality !== undefined) checkValue(CRITICALITY_RULE, 'ambient.criticality', criticality);
    for (const [field, value] of [
      ['nestedRetry', nestedRetry],
      ['singleShot', singleShot],
    ] as const) {
      if (value !== undefined) checkValue(BOOLEAN_RULE, `ambient.${field}`, value);
    }
    const parent = storage.getStore();
    const clock = changes.clock ?? parent?.clock ?? SystemClock.instance;
    let deadlineAt =
      parent === undefined
        ? Infinity
        : parent.clock === clock
          ? parent.deadlineAt
          : translate(parent, clock);
    if (remaining !== undefined) deadlineAt = Math.min(deadlineAt, clock.now() + remaining);
    const state: AmbientState = Object.freeze({
      deadlineAt,
      clock,
      criticality: criticality ?? parent?.criticality,
      nestedRetry: nestedRetry === true || parent?.nestedRetry === true,
      singleShot: singleShot === true || parent?.singleShot === true,
    });
    return storage.run(state, fn);
  },

  /**
   * Runs `fn` inside exactly `state`, a context captured earlier with {@link Ambient.current} (for
   * work that continues where the async context was lost, such as a framework callback): its
   * deadline keeps counting from when it was set.
   * @throws PolicyConfigError (field `ambient`) when `state` is not a captured state
   */
  enter<T>(state: AmbientState, fn: () => T): T {
    if (
      state === null ||
      typeof state !== 'object' ||
      typeof state.deadlineAt !== 'number' ||
      typeof state.clock?.now !== 'function'
    ) {
      throw new PolicyConfigError('ambient', state, 'must be a state read from Ambient.current()');
    }
    return storage.run(state, fn);
  },

  /**
   * Milliseconds the inbound caller is still waiting (may be negative once it has passed), or
   * `undefined` when no caller deadline is known.
   */
  remaining(): number | undefined {
    const state = storage.getStore();
    if (state === undefined || state.deadlineAt === Infinity) return undefined;
    return state.deadlineAt - state.clock.now();
  },

  /** The current work's criticality; `critical` when unlabeled or outside any context. */
  criticality(): Criticality {
    return storage.getStore()?.criticality ?? 'critical';
  },

  /**
   * Runs `fn` in a single-shot scope: every policy call made inside makes one attempt (no retries),
   * for work an outer layer already retries.
   */
  singleShot<T>(fn: () => T): T {
    return Ambient.run({ singleShot: true }, fn);
  },
} as const;

/** `parent`'s deadline as a reading of `clock`. */
function translate(parent: AmbientState, clock: Clock): number {
  if (parent.deadlineAt === Infinity) return Infinity;
  return clock.now() + (parent.deadlineAt - parent.clock.now());
}
