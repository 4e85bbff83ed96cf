import fc from 'fast-check';
import { PolicyConfigError } from '../core/index.js';
import { parseResilienceConfig } from './policy-config.js';
import { policyFromPlan } from './policy-from-plan.js';
import { ResilienceConfigError } from './resilience-config.error.js';

// Keys a config may hold, keys it may not, and the reserved names: most generated sections then hit a
// real rule rather than only "unknown key".
const KEYS = [
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
  'type',
  'delay',
  'transientBase',
  'factor',
  'jitter',
  'fraction',
  'minimumPerSecond',
  'shared',
  'retryRatio',
  'samplingDuration',
  'breakDuration',
  'maximumBreak',
  'tripWindow',
  'recovery',
  'maximumKeys',
  'base',
  'permanent',
  'policies',
  'defaults',
  '__proto__',
  'constructor',
  'prototype',
  'typo',
];
const key = fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 4 }));

const leaf = fc.oneof(
  fc.constantFrom(
    null,
    undefined,
    true,
    false,
    0,
    1,
    3,
    -1,
    0.5,
    1.5,
    101,
    1e-9,
    NaN,
    Infinity,
    -0,
    '',
    ' ',
    '3',
    '10s',
    '250ms',
    '-1s',
    'soon',
  ),
  fc.constantFrom(
    'none',
    'full',
    'equal',
    'exponential',
    'constant',
    'http',
    'default',
    'conservative',
    'p',
    'q',
    '__proto__',
    'constructor',
  ),
  fc.integer({ min: -10, max: 2_000_000 }),
  fc.double(),
  fc.bigInt({ min: -5n, max: 5n }),
  fc.string({ maxLength: 6 }),
  fc.constantFrom(Symbol('s'), () => 1),
  fc.constant(null).map(() => new Map([['attempts', 2]])),
  fc.constant(null).map(() => new Date(0)),
  fc.constant(null).map(() => /x/),
);

/** Plain, null-prototype and inheriting objects of `value`s. */
function objectOf(value: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const entries = fc.array(fc.tuple(key, value), { maxLength: 5 });
  const assign = (target: Record<string, unknown>, pairs: [string, unknown][]) => {
    // defineProperty, so a "__proto__" key is an own property as JSON.parse and YAML make it.
    for (const [k, v] of pairs)
      Object.defineProperty(target, k, {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return target;
  };
  return fc.oneof(
    entries.map((pairs) => assign({}, pairs)),
    entries.map((pairs) => assign(Object.create(null) as Record<string, unknown>, pairs)),
    fc
      .tuple(entries, entries)
      .map(([inherited, own]) =>
        assign(Object.create(assign({}, inherited)) as Record<string, unknown>, own),
      ),
  );
}

const { tree } = fc.letrec((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    objectOf(tie('tree')),
    fc.array(tie('tree'), { maxLength: 3 }),
  ),
}));
const policyName = fc.oneof(
  fc.constantFrom('payments', 'search', '__proto__', 'constructor', 'prototype', '', ' '),
  fc.string({ maxLength: 4 }),
);
const section = fc.oneof(objectOf(tree), tree);
const config = fc.oneof(
  tree,
  fc.record(
    {
      policies: fc.oneof(
        fc
          .array(fc.tuple(policyName, section), { maxLength: 4 })
          .map((pairs) => Object.fromEntries(pairs)),
        tree,
      ),
      defaults: section,
    },
    { requiredKeys: ['policies'] },
  ),
);

describe('parseResilienceConfig on arbitrary config-shaped values', () => {
  it('either succeeds (and every plan builds) or throws a ResilienceConfigError whose every problem names its path', () => {
    fc.assert(
      fc.property(config, (value) => {
        let parsed;
        try {
          parsed = parseResilienceConfig(value);
        } catch (error) {
          expect(error).toBeInstanceOf(ResilienceConfigError);
          const problems = (error as ResilienceConfigError).problems;
          expect(problems.length).toBeGreaterThan(0);
          for (const problem of problems) {
            expect(problem).toBeInstanceOf(PolicyConfigError);
            expect(problem.field.length).toBeGreaterThan(0);
            expect(problem.message.startsWith(`${problem.field}: `)).toBe(true);
            expect((error as Error).message).toContain(problem.message);
          }
          return;
        }
        for (const plan of parsed.policies.values()) policyFromPlan(plan);
      }),
      { numRuns: 400, seed: 9 },
    );
  });
});
