import { RuleTester } from '@typescript-eslint/rule-tester';
import { attemptSignalPassed } from './attempt-signal-passed.js';

const tester = new RuleTester();

tester.run('attempt-signal-passed', attemptSignalPassed, {
  valid: [
    `class P { @Resilient('p') async charge(id: string, @AttemptSignal() signal?: AbortSignal): Promise<void> { await fetch(url, { signal }); } }`,
    `class P { @Resilient('p') async charge(@AttemptSignal() signal: AbortSignal): Promise<void> { signal.throwIfAborted(); } }`,
    `class P { @Resilient('p') async charge(@AttemptSignal() s: AbortSignal = new AbortController().signal): Promise<void> { return this.api.charge({ signal: s }); } }`,
    `class P { @Resilient('p') async charge(@AttemptSignal() signal?: AbortSignal): Promise<void> { await run(() => fetch(url, { signal })); } }`,
    `class P { async charge(signal?: AbortSignal): Promise<void> {} }`,
  ],
  invalid: [
    {
      code: `class Payments { @Resilient('p') async charge(id: string, @AttemptSignal() signal?: AbortSignal): Promise<void> { await fetch(url + id); } }`,
      errors: [
        { messageId: 'unused', data: { name: 'signal', method: 'Payments.charge' }, line: 1 },
      ],
    },
    {
      // Writing to the parameter is not passing it on.
      code: `class Payments { @Resilient('p') async charge(@AttemptSignal() signal?: AbortSignal): Promise<void> { signal = undefined; await fetch(url); } }`,
      errors: [{ messageId: 'unused', data: { name: 'signal', method: 'Payments.charge' } }],
    },
    {
      // A different variable of the same name inside does not count.
      code: `class Payments { @Resilient('p') async charge(@AttemptSignal() signal?: AbortSignal): Promise<void> { const f = (signal: AbortSignal) => fetch(url, { signal }); await f(new AbortController().signal); } }`,
      errors: [{ messageId: 'unused', data: { name: 'signal', method: 'Payments.charge' } }],
    },
  ],
});
