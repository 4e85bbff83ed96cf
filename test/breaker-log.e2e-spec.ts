import { describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Breaker, FakeClock, Resilience, RetryBudget } from '../lib/core/index.js';
import { dependencyFailureOf } from '../lib/core/internal.js';
import { createResilientFetch } from '../lib/http/index.js';
import { withLogging } from '../lib/telemetry/index.js';

/**
 * A resilient fetch to a closed port (a real socket): the breaker's line names the failure as the
 * exception filter's does, by the socket code undici puts on the error's cause, not by the class of
 * the `TypeError: fetch failed` that carries it.
 */
describe('the breaker opening on a closed port, logged', () => {
  it('names ECONNREFUSED, the cause the exception filter names', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));

    const clock = new FakeClock();
    const lines: string[] = [];
    const at = (level: string) => (message: string) => void lines.push(`${level} ${message}`);
    const policy = withLogging(
      Resilience.default.with({
        name: 'inventory',
        clock,
        attempts: 1,
        budget: RetryBudget.none,
        breaker: Breaker.with({ breakDuration: 1000, jitter: 'none' }),
      }),
      { log: at('log'), warn: at('warn'), debug: at('debug'), verbose: at('verbose') },
    );
    const inventory = createResilientFetch({ policy });
    const causes: (string | undefined)[] = [];
    for (let i = 0; i < 5; i++) {
      const error = await inventory(`http://127.0.0.1:${port}/stock`).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      causes.push(dependencyFailureOf(error)?.cause);
    }
    expect(causes).toEqual(Array.from({ length: 5 }, () => 'ECONNREFUSED'));
    expect(lines).toEqual([
      `warn [inventory] Breaker opened for 1.0s after 5 failures (host 127.0.0.1:${port}; last: ECONNREFUSED)`,
    ]);
  });
});
