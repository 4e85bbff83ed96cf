import { RuleTester } from '@typescript-eslint/rule-tester';
import { noPerCallPolicy } from './no-per-call-policy.js';

const tester = new RuleTester();

tester.run('no-per-call-policy', noPerCallPolicy, {
  valid: [
    // Module level, class fields, constructors, lifecycle hooks and factories build once.
    `const payments = Resilience.http.with({ name: 'payments' }).withListener(log);`,
    `const scope = new PolicyScope(Resilience.http, { maximumKeys: 100 });`,
    `class A { private readonly policy = Resilience.default.with({ attempts: 2, budget: RetryBudget.of({ fraction: 0.2 }) }); }`,
    `class A { private readonly policy; constructor() { this.policy = Resilience.http.with({ name: 'x' }); } }`,
    `class A { onModuleInit() { this.policy = Resilience.http.with({ name: 'x' }); } }`,
    `const providers = [{ provide: 'P', useFactory: () => { const p = Resilience.http.with({ name: 'p' }); return p; } }];`,
    `function paymentsPolicy() { return Resilience.http.with({ name: 'payments', budget: RetryBudget.of({ fraction: 0.2 }) }).withListener(log); }`,
    `const build = (name: string) => Resilience.default.with({ name });`,
    `const policies = (() => { const p = Resilience.default.with({}); return [p]; })();`,
    `class A { get policy() { return (this.cached ??= Resilience.default.with({ attempts: 2 })); } }`,
    `function get() { cache = cache ?? (cache = Resilience.default.with({})); return cache; }`,
    // A factory of closures: the policy is built once per factory call and kept by what it returns.
    `function presets() { const off = Resilience.default.with({ attempts: 1 }); return { off: () => off.run(work) }; }`,
    `const build = async () => { const policy = Resilience.default.with({}); return (call: () => Promise<number>) => policy.run(() => call()); };`,
    // Rebuilt only when what it is built from changed.
    `class Hosts { for(origin: string) { if (this.scope === undefined || t !== this.template) { this.scope = new PolicyScope(t, {}); } return this.scope.for(origin); } }`,
    // Deriving from a policy held elsewhere is not a preset build.
    `class A { charge() { return this.policy.with({ attempts: 1 }).run(work); } }`,
  ],
  invalid: [
    {
      // Assigned to a member on every call: no guard reads it.
      code: `class S { run() { this.policy = Resilience.default.with({}); return this.policy.run(work); } }`,
      errors: [
        {
          messageId: 'perCall',
          data: {
            what: 'Resilience.default.with(...)',
            fn: 'S.run',
            state: 'retry budget, breaker and estimates',
          },
        },
      ],
    },
    {
      // Used directly in the body as well as in a closure: built per call.
      code: `function handle() { const p = Resilience.default.with({}); p.run(work); return () => p.run(work); }`,
      errors: [
        {
          messageId: 'perCall',
          data: {
            what: 'Resilience.default.with(...)',
            fn: 'handle',
            state: 'retry budget, breaker and estimates',
          },
        },
      ],
    },
    {
      code: `class Checkout { async charge(order: Order) { const policy = Resilience.http.with({ name: 'payments' }); return policy.run(() => pay(order)); } }`,
      errors: [
        {
          messageId: 'perCall',
          data: {
            what: 'Resilience.http.with(...)',
            fn: 'Checkout.charge',
            state: 'retry budget, breaker and estimates',
          },
        },
      ],
    },
    {
      code: `app.get('/x', async (req, res) => { res.send(await Resilience.default.withListener(log).run(work)); });`,
      errors: [
        {
          messageId: 'perCall',
          data: {
            what: 'Resilience.default.withListener(...)',
            fn: 'this function',
            state: 'retry budget, breaker and estimates',
          },
        },
      ],
    },
    {
      code: `function handle(tenant: string) { const scope = new PolicyScope(base, { maximumKeys: 10 }); return scope.for(tenant).run(work); }`,
      errors: [
        {
          messageId: 'perCall',
          data: {
            what: 'new PolicyScope(...)',
            fn: 'handle',
            state: 'keys, their breakers and budgets',
          },
        },
      ],
    },
    {
      code: `class S { run() { return this.base.with({ budget: RetryBudget.of({ fraction: 0.5 }) }).run(work); } }`,
      errors: [
        {
          messageId: 'perCall',
          data: { what: 'RetryBudget.of(...)', fn: 'S.run', state: 'tokens' },
        },
      ],
    },
    {
      // One report for the preset build; the budget inside it is part of the same mistake.
      code: `async function handler() { return (await Resilience.http.with({ budget: RetryBudget.of({ fraction: 0.5 }) }).run(work)).body; }`,
      errors: [
        {
          messageId: 'perCall',
          data: {
            what: 'Resilience.http.with(...)',
            fn: 'handler',
            state: 'retry budget, breaker and estimates',
          },
        },
      ],
    },
  ],
});
