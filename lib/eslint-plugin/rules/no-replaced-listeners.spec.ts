import { RuleTester } from '@typescript-eslint/rule-tester';
import { noReplacedListeners } from './no-replaced-listeners.js';

const tester = new RuleTester();

tester.run('no-replaced-listeners', noReplacedListeners, {
  valid: [
    `const p = Resilience.default.with({ onEvent: log });`,
    `const p = withTelemetry(Resilience.default).withListener(log);`,
    `const p = withTelemetry(Resilience.default).with({ attempts: 2 });`,
    // Removing them says the replacement is meant.
    `const p = withTelemetry(Resilience.default).with({ onEvent: undefined }).withListener(log);`,
    `const base = Resilience.default.with({ name: 'x' }); const p = base.with({ onEvent: log });`,
    `function f(policy: Policy) { return policy.with({ onEvent: log }); }`,
  ],
  invalid: [
    {
      code: `const p = withTelemetry(Resilience.http).with({ onEvent: log });`,
      errors: [
        {
          messageId: 'replaces',
          data: { why: 'withTelemetry() attached listeners' },
          suggestions: [
            {
              messageId: 'useWithListener',
              output: `const p = withTelemetry(Resilience.http).withListener(log);`,
            },
          ],
        },
      ],
    },
    {
      code: `const logged = withLogging(Resilience.http, logger); const p = logged.with({ onEvent: log, attempts: 2 });`,
      errors: [
        {
          messageId: 'replaces',
          data: { why: 'withLogging() attached listeners' },
          suggestions: [],
        },
      ],
    },
    {
      code: `const traced = Resilience.http.withListener(a); const p = traced.with({ attempts: 2 }).with({ onEvent: b, attempts: 1 });`,
      errors: [
        {
          messageId: 'replaces',
          data: { why: '.withListener() earlier in its chain' },
          suggestions: [],
        },
      ],
    },
    {
      code: `const p = Resilience.default.with({ onEvent: a }).with({ onEvent: b });`,
      errors: [
        {
          messageId: 'replaces',
          data: { why: 'an onEvent set earlier in its chain' },
          suggestions: [
            {
              messageId: 'useWithListener',
              output: `const p = Resilience.default.with({ onEvent: a }).withListener(b);`,
            },
          ],
        },
      ],
    },
    {
      code: `class S { constructor(@InjectPolicy('p') private readonly handle: PolicyHandle) {} run() { return this.handle.current.with({ onEvent: log }).run(work); } }`,
      errors: [
        {
          messageId: 'replaces',
          data: {
            why: "a PolicyHandle's current policy (ResilienceModule attached telemetry and logging)",
          },
          suggestions: [
            {
              messageId: 'useWithListener',
              output: `class S { constructor(@InjectPolicy('p') private readonly handle: PolicyHandle) {} run() { return this.handle.current.withListener(log).run(work); } }`,
            },
          ],
        },
      ],
    },
    {
      code: `const p = this.registry.get('payments').with({ onEvent });`,
      errors: [
        {
          messageId: 'replaces',
          data: {
            why: 'a policy from PolicyRegistry (ResilienceModule attached telemetry and logging)',
          },
          suggestions: [
            {
              messageId: 'useWithListener',
              output: `const p = this.registry.get('payments').withListener(onEvent);`,
            },
          ],
        },
      ],
    },
  ],
});
