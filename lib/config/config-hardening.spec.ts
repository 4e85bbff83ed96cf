import { parseResilienceConfig } from './policy-config.js';
import { ResilienceConfigError } from './resilience-config.error.js';

/** The problem lines of the config's error ("path: value is invalid: rule"), or [] when it parses. */
function problems(config: unknown): string[] {
  try {
    parseResilienceConfig(config);
    return [];
  } catch (error) {
    if (!(error instanceof ResilienceConfigError)) throw error;
    return error.problems.map((problem) => problem.message);
  }
}

const PLAIN =
  'must be a plain object (an object literal or a JSON/YAML mapping; not an array, Map, Date, RegExp, class instance or an object inheriting properties)';
const RESERVED = 'must be a non-empty string other than __proto__, constructor, prototype';

describe('config hardening (regressions found by fuzzing 26 k configs)', () => {
  describe('null is refused everywhere a value is expected', () => {
    it.each([
      [
        { budget: { fraction: null } },
        'policies.p.budget.fraction: null is invalid: must be a number in [0, 1]',
      ],
      [
        { budget: { minimumPerSecond: null } },
        'policies.p.budget.minimumPerSecond: null is invalid: must be 0 (no floor) or a number of tokens per second in [0.00001157 (one a day), 1000000]',
      ],
      [
        { budget: { retryRatio: null } },
        'policies.p.budget.retryRatio: null is invalid: must be a number in [0, 1] (retries per logical call)',
      ],
      [
        { budget: null },
        "policies.p.budget: null is invalid: must be true, false, 'none', a token bucket { fraction?, minimumPerSecond?, shared? } or a sliding window { retryRatio?, samplingDuration?, minimumThroughput? }",
      ],
      [
        { attempts: null },
        'policies.p.attempts: null is invalid: must be an integer >= 1 (total attempts, including the first), at most 100',
      ],
      [
        { backoff: { factor: null } },
        'policies.p.backoff.factor: null is invalid: must be a finite number >= 1',
      ],
      [
        { backoff: { jitter: null } },
        "policies.p.backoff.jitter: null is invalid: must be 'full', 'equal' or 'none'",
      ],
      [
        { breaker: { breakDuration: null } },
        'policies.p.breaker.breakDuration: null is invalid: must be a finite duration in ms > 0, written as a ms number or a string such as "250ms", "10s", "2m"',
      ],
      [
        { breaker: { consecutiveFailures: null } },
        'policies.p.breaker.consecutiveFailures: null is invalid: must be an integer >= 0',
      ],
      [
        { scope: { maximumKeys: null } },
        'policies.p.scope.maximumKeys: null is invalid: must be an integer >= 1 (the most keys a scope holds), at most 1000000',
      ],
      [
        { useAmbientDeadline: null },
        'policies.p.useAmbientDeadline: null is invalid: must be true or false',
      ],
      [
        { classifier: { base: null } },
        "policies.p.classifier.base: null is invalid: must be 'default', 'http' or 'grpc'",
      ],
    ])('%j', (section, message) => {
      expect(problems({ policies: { p: section } })).toEqual([message]);
    });

    it('except deadline and attemptTimeout, where null is the documented "remove the bound"', () => {
      const plan = parseResilienceConfig({
        policies: { p: { preset: 'http', deadline: null, attemptTimeout: null } },
      }).policies.get('p')!;
      expect(plan.changes).toEqual({ deadline: undefined, attemptTimeout: undefined });
    });

    it('null as a whole section or config', () => {
      expect(problems({ policies: { p: null } })).toEqual([
        'policies.p: null is invalid: must be an object with the policy keys (preset, extends, attempts, deadline, attemptTimeout, backoff, budget, breaker, scope, useAmbientDeadline, useAmbientCriticality, classifier, limit, hedge, repeatable, saturation, attemptCeiling, adaptive, restarts)',
      ]);
      expect(problems({ policies: {}, defaults: null })[0]).toMatch(
        /^defaults: null is invalid: must be an object with the policy keys/,
      );
      expect(problems(null)).toEqual([
        'config: null is invalid: must be an object { policies, defaults? }',
      ]);
      expect(problems({ policies: null })).toEqual([
        'policies: null is invalid: must be an object of named policies, e.g. { "payments": { "attempts": 3 } }',
      ]);
    });
  });

  describe('only plain objects are sections', () => {
    class Settings {
      attempts = 2;
    }
    it.each([
      ['a Map', { p: new Map([['attempts', 2]]) }, 'policies.p: Map(1)'],
      ['a Date', { p: new Date(0) }, 'policies.p: Date(1970-01-01T00:00:00.000Z)'],
      ['a RegExp', { p: /attempts/ }, 'policies.p: RegExp(/attempts/)'],
      ['an array', { p: [] }, 'policies.p: []'],
      ['a class instance', { p: new Settings() }, 'policies.p: Settings {"attempts":2}'],
    ])('%s as a policy', (_what, policies, start) => {
      expect(problems({ policies })).toEqual([`${start} is invalid: ${PLAIN}`]);
    });

    it('in every nested section and at the root', () => {
      expect(problems({ policies: { p: { budget: new Map() } } })).toEqual([
        `policies.p.budget: Map(0) is invalid: ${PLAIN}`,
      ]);
      expect(problems({ policies: { p: { backoff: new Date(0) } } })).toEqual([
        `policies.p.backoff: Date(1970-01-01T00:00:00.000Z) is invalid: ${PLAIN}`,
      ]);
      expect(problems({ policies: { p: { breaker: [] } } })).toEqual([
        `policies.p.breaker: [] is invalid: ${PLAIN}`,
      ]);
      expect(problems({ policies: { p: { scope: new Set() } } })).toEqual([
        `policies.p.scope: Set(0) is invalid: ${PLAIN}`,
      ]);
      expect(problems({ policies: { p: { classifier: new Map() } } })).toEqual([
        `policies.p.classifier: Map(0) is invalid: ${PLAIN}`,
      ]);
      expect(problems({ policies: { p: { breaker: { recovery: new Map() } } } })).toEqual([
        'policies.p.breaker.recovery: Map(0) is invalid: must be true, false or { initialFraction, rampFraction, step }',
      ]);
      expect(problems({ policies: new Map() })).toEqual([`policies: Map(0) is invalid: ${PLAIN}`]);
      expect(problems(new Map())).toEqual([`config: Map(0) is invalid: ${PLAIN}`]);
    });

    it('null-prototype objects are plain', () => {
      const section = Object.assign(Object.create(null), { attempts: 2 });
      const policies = Object.assign(Object.create(null), { p: section });
      expect(parseResilienceConfig({ policies }).policies.get('p')!.changes).toEqual({
        attempts: 2,
      });
    });
  });

  describe('own properties only', () => {
    it('an object inheriting its settings is refused, not read', () => {
      expect(problems({ policies: { p: Object.create({ attempts: 9 }) } })).toEqual([
        `policies.p: [inheriting attempts] {} is invalid: ${PLAIN}`,
      ]);
    });

    it('a getter that throws is a problem at its path, not a crash', () => {
      const section = Object.defineProperty({}, 'attempts', {
        enumerable: true,
        get() {
          throw new Error('boom');
        },
      });
      expect(problems({ policies: { p: section } })).toEqual([
        'policies.p.attempts: "[getter]" is invalid: could not be read: boom',
      ]);
    });
  });

  describe('reserved names', () => {
    it.each(['__proto__', 'constructor', 'prototype'])('%s is refused as a policy name', (name) => {
      const config = JSON.parse(
        `{ "policies": { "${name}": { "attempts": 2 }, "ok": {} } }`,
      ) as unknown;
      expect(problems(config)).toEqual([
        `policies.${name}: "${name}" is invalid: a policy name ${RESERVED}`,
      ]);
    });

    it.each(['__proto__', 'constructor', 'prototype'])(
      '%s is refused as a shared budget name',
      (name) => {
        expect(problems({ policies: { p: { budget: { shared: name } } } })).toEqual([
          `policies.p.budget.shared: "${name}" is invalid: ${RESERVED}`,
        ]);
      },
    );

    it('an empty name too', () => {
      expect(problems({ policies: { ' ': {} } })).toEqual([
        `policies[" "]: " " is invalid: a policy name ${RESERVED}`,
      ]);
      expect(problems({ policies: {}, '': 1 })[0]).toBe(
        '[""]: 1 is invalid: is not a known resilience config key (policies, defaults)',
      );
    });
  });

  it('tells 3n from 3 and "3" from 3', () => {
    expect(problems({ policies: { p: { attempts: 3n } } })).toEqual([
      'policies.p.attempts: 3n is invalid: must be an integer >= 1 (total attempts, including the first), at most 100',
    ]);
    expect(problems({ policies: { p: { attempts: '3' } } })).toEqual([
      'policies.p.attempts: "3" is invalid: must be an integer >= 1 (total attempts, including the first), at most 100',
    ]);
    expect(problems({ policies: { p: { attempts: 3 } } })).toEqual([]);
  });

  it('bounds the budget floor: 0 or at least one token a day', () => {
    expect(problems({ policies: { p: { budget: { minimumPerSecond: 0 } } } })).toEqual([]);
    expect(problems({ policies: { p: { budget: { minimumPerSecond: 1e-9 } } } })).toEqual([
      'policies.p.budget.minimumPerSecond: 1e-9 is invalid: must be 0 (no floor) or a number of tokens per second in [0.00001157 (one a day), 1000000]',
    ]);
  });

  it('bounds attempts at 100, as policy.with() does', () => {
    expect(problems({ defaults: { attempts: 1000 }, policies: { p: {} } })).toEqual([
      'defaults.attempts: 1000 is invalid: must be an integer >= 1 (total attempts, including the first), at most 100',
    ]);
  });

  it('a cross-field breaker rule is checked once the defaults are merged, at the policy path', () => {
    expect(
      problems({
        defaults: { breaker: { breakDuration: '10s' } },
        policies: { p: { breaker: { maximumBreak: '5s' } } },
      }),
    ).toEqual([
      'policies.p.breaker.maximumBreak: 5000 is invalid: must be a finite duration in ms >= breakDuration (10000)',
    ]);
  });
});
