import { RuleTester } from '@typescript-eslint/rule-tester';
import { noReplacedListeners } from './no-replaced-listeners.js';

const tester = new RuleTester();

tester.run('no-replaced-listeners', noReplacedListeners, {
  valid: [
    `const p = Resilience.default.with({ onEvent: log });`,
    `const p = Resilience.default.withTelemetry().withListener(log);`,
    `const p = Resilience.default.withTelemetry().with({ attempts: 2 });`,
    // Passing `around` too says the replacement is meant.
    `const p = Resilience.default.withTelemetry().with({ onEvent: log, around: undefined });`,
    `const base = Resilience.default.with({ name: 'x' }); const p = base.with({ onEvent: log });`,
    `function f(policy: Policy) { return policy.with({ onEvent: log }); }`,
  ],
  invalid: [
    {
      code: `const p = Resilience.http.withTelemetry().with({ onEvent: log });`,
      errors: [
        {
          messageId: 'replaces',
          data: { why: '.withTelemetry() earlier in its chain' },
          suggestions: [{ messageId: 'useWithListener', output: `const p = Resilience.http.withTelemetry().withListener(log);` }],
        },
      ],
    },
    {
      code: `const traced = Resilience.http.withListener(a); const p = traced.with({ attempts: 2 }).with({ onEvent: b, attempts: 1 });`,
      errors: [{ messageId: 'replaces', data: { why: '.withListener() earlier in its chain' }, suggestions: [] }],
    },
    {
      code: `const p = Resilience.default.with({ onEvent: a }).with({ onEvent: b });`,
      errors: [{ messageId: 'replaces', data: { why: 'an onEvent set earlier in its chain' }, suggestions: [{ messageId: 'useWithListener', output: `const p = Resilience.default.with({ onEvent: a }).withListener(b);` }] }],
    },
    {
      code: `class S { constructor(@InjectPolicy('p') private readonly handle: PolicyHandle) {} run() { return this.handle.current.with({ onEvent: log }).run(work); } }`,
      errors: [{ messageId: 'replaces', data: { why: "a PolicyHandle's current policy (ResilienceModule attached telemetry and logging)" }, suggestions: [{ messageId: 'useWithListener', output: `class S { constructor(@InjectPolicy('p') private readonly handle: PolicyHandle) {} run() { return this.handle.current.withListener(log).run(work); } }` }] }],
    },
    {
      code: `const p = this.registry.get('payments').with({ onEvent });`,
      errors: [{ messageId: 'replaces', data: { why: 'a policy from PolicyRegistry (ResilienceModule attached telemetry and logging)' }, suggestions: [{ messageId: 'useWithListener', output: `const p = this.registry.get('payments').withListener(onEvent);` }] }],
    },
  ],
});
