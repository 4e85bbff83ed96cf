import { RuleTester } from '@typescript-eslint/rule-tester';
import { noRejectedCallRetry } from './no-rejected-call-retry.js';

const tester = new RuleTester();

tester.run('no-rejected-call-retry', noRejectedCallRetry, {
  valid: [
    // Propagating, falling back, or skipping an item are fine.
    `async function f() { try { return await policy.run(work); } catch (e) { if (e instanceof CallRejectedError) throw e; return fallback(); } }`,
    `async function f() { while (true) { try { return await policy.run(work); } catch (e) { if (e instanceof CallRejectedError) return fallback(); await sleep(10); } } }`,
    `async function f() { for (;;) { try { return await policy.run(work); } catch (e) { if (e instanceof CallRejectedError) break; } } }`,
    `async function f(orders: Order[]) { for (const o of orders) { try { await policy.run(() => pay(o)); } catch (e) { if (e instanceof CallRejectedError) continue; throw e; } } }`,
    // Waiting out the refusal's own retryAfter keeps to the budget.
    `async function f() { while (true) { try { return await policy.run(work); } catch (e) { if (e instanceof CallRejectedError) { await sleep(e.retryAfter ?? 1000); continue; } throw e; } } }`,
    `async function f() { while (true) { try { return await policy.run(work); } catch (e) { if (e instanceof TypeError) continue; throw e; } } }`,
  ],
  invalid: [
    {
      code: `async function charge() { while (true) { try { return await policy.run(work); } catch (e) { if (e instanceof CallRejectedError) continue; throw e; } } }`,
      errors: [{ messageId: 'loop', line: 1 }],
    },
    {
      code: `async function charge() { for (let i = 0; i < 5; i++) { try { return await policy.run(work); } catch (error) { if ((error as Error).name === 'CallRejectedError') { await sleep(100); } else { throw error; } } } }`,
      errors: [{ messageId: 'loop' }],
    },
    {
      // The negative form: everything but a rejection is rethrown; the rejection goes round.
      code: `async function charge() { do { try { return await policy.run(work); } catch (e) { if (!(e instanceof CallRejectedError)) throw e; log(e); } } while (true); }`,
      errors: [{ messageId: 'loop' }],
    },
    {
      code: `async function charge() { let n = 0; while (n++ < 3) { try { return await policy.run(work); } catch (e: any) { if (e.reason === 'BudgetExhausted') continue; throw e; } } }`,
      errors: [{ messageId: 'loop' }],
    },
    {
      code: `class Payments { async charge(order: Order): Promise<Receipt> { try { return await this.policy.run(() => pay(order)); } catch (e) { if (e instanceof errors.CallRejectedError) return this.charge(order); throw e; } } }`,
      errors: [{ messageId: 'recursion', data: { fn: 'charge' } }],
    },
    {
      code: `async function charge(order: Order): Promise<Receipt> { try { return await policy.run(() => pay(order)); } catch (e) { if (e instanceof CallRejectedError) { return charge(order); } throw e; } }`,
      errors: [{ messageId: 'recursion', data: { fn: 'charge' } }],
    },
  ],
});
