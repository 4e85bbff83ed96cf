import { RuleTester } from '@typescript-eslint/rule-tester';
import { deadlineFitsAttempts } from './deadline-fits-attempts.js';

const tester = new RuleTester();

tester.run('deadline-fits-attempts', deadlineFitsAttempts, {
  valid: [
    // 2 × 2000 + mean backoff (50 + 100) = 4150 ms before the 3rd attempt: fits in 10 s.
    `ResilienceModule.forRoot({ policies: { payments: { attempts: 3, deadline: '10s', attemptTimeout: '2s' } } });`,
    // The storm demo: 2 × 1000 + 12.5 + 25 < 3000.
    `Resilience.default.with({ attempts: 3, attemptTimeout: 1000, deadline: 3000, backoff: Backoff.exponential({ transientBase: 25 }) });`,
    // No attemptTimeout: nothing bounds an attempt, nothing to compare.
    `Resilience.http.with({ attempts: 10 });`,
    // Unknown values are not guessed.
    `Resilience.default.with({ attempts: n, attemptTimeout: 1000, deadline: 1500 });`,
    `Resilience.default.with({ attemptTimeout: t, deadline: 1000 });`,
    // Not policy options.
    `const job = { attempts: 5, attemptTimeout: 2000, deadline: 3000 };`,
    `queue.add({ attempts: 5, attemptTimeout: 2000, deadline: 3000 });`,
    // `deadline: null` removes the preset's deadline.
    `ResilienceModule.forRoot({ policies: { a: { preset: 'http', deadline: null, attempts: 9, attemptTimeout: '20s' } } });`,
  ],
  invalid: [
    {
      code: `Resilience.default.with({ attempts: 3, attemptTimeout: 5000, deadline: 5000 });`,
      errors: [{ messageId: 'timeoutNotShorter', data: { timeout: 5000, deadline: 5000 } }],
    },
    {
      // 4 × 2000 + (50 + 100 + 200 + 400) = 8750 ms before the 5th attempt; only 2 start within 3 s.
      code: `Resilience.default.with({ attempts: 5, attemptTimeout: 2000, deadline: 3000 });`,
      errors: [
        {
          messageId: 'attemptsCut',
          data: {
            deadline: 3000,
            attempts: 5,
            retries: 4,
            timeout: 2000,
            backoff: 750,
            needed: 8750,
            fits: 2,
          },
        },
      ],
    },
    {
      // The http preset's 30 s deadline; 3 attempts of 20 s.
      code: `const p = Resilience.http.with({ attemptTimeout: 20_000 });`,
      errors: [
        {
          messageId: 'attemptsCut',
          data: {
            deadline: 30000,
            attempts: 3,
            retries: 2,
            timeout: 20000,
            backoff: 150,
            needed: 40150,
            fits: 2,
          },
        },
      ],
    },
    {
      // Nest config: durations as strings, the backoff from `defaults`, constant 1 s.
      code: `ResilienceModule.forRoot({ defaults: { backoff: { type: 'constant', delay: '1s' } }, policies: { payments: { attempts: 4, attemptTimeout: '2s', deadline: '8s' } } });`,
      errors: [
        {
          messageId: 'attemptsCut',
          data: {
            deadline: 8000,
            attempts: 4,
            retries: 3,
            timeout: 2000,
            backoff: 3000,
            needed: 9000,
            fits: 3,
          },
        },
      ],
    },
    {
      code: `const config: PolicyConfig = { preset: 'http', attemptTimeout: '45s' };`,
      errors: [{ messageId: 'timeoutNotShorter', data: { timeout: 45000, deadline: 30000 } }],
    },
    {
      code: `const SECOND = 1000; Resilience.default.with({ attempts: 4, attemptTimeout: 3 * SECOND, deadline: 5 * SECOND, backoff: Backoff.none });`,
      errors: [
        {
          messageId: 'attemptsCut',
          data: {
            deadline: 5000,
            attempts: 4,
            retries: 3,
            timeout: 3000,
            backoff: 0,
            needed: 9000,
            fits: 2,
          },
        },
      ],
    },
  ],
});
