/**
 * Success-path cost of protecting a trivial async call, against a raw awaited call and against peers
 * measured in the same run (issue 2, DESIGN §10). Run on demand: `npm run bench`. Not part of `npm test`.
 *
 * Reports ns per call and the ratio to the raw call. Peers: cockatiel 3.2.1 (retry; retry+breaker+
 * 30 s timeout) and opossum 9 (with and without its 30 s timeout).
 */
import { ConsecutiveBreaker, TimeoutStrategy, circuitBreaker, handleAll, retry, timeout, wrap } from 'cockatiel';
import CircuitBreaker from 'opossum';
import { Bench } from 'tinybench';
import { RetryBudget, Resilience } from '@nresilience/nestjs/core';

const work = async () => 1;

const cockatielRetry = retry(handleAll, { maxAttempts: 2 });
const cockatielFull = wrap(
  retry(handleAll, { maxAttempts: 2 }),
  circuitBreaker(handleAll, { halfOpenAfter: 15_000, breaker: new ConsecutiveBreaker(5) }),
  timeout(30_000, TimeoutStrategy.Cooperative),
);
const opossumTimeout = new CircuitBreaker(work, { timeout: 30_000 });
const opossumPlain = new CircuitBreaker(work, { timeout: false });

const bareOff = Resilience.default.with({ attempts: 1, budget: RetryBudget.none });
const defaults = Resilience.default;
const http = Resilience.http;

const time = Number(process.env.BENCH_TIME_MS ?? 1500);
const bench = new Bench({ time, warmupTime: 300 });
bench
  .add('raw await', async () => {
    await work();
  })
  .add('nresilience: every feature off', async () => {
    await bareOff.run(work);
  })
  .add('nresilience: Resilience.default (retry + budget)', async () => {
    await defaults.run(work);
  })
  .add('nresilience: Resilience.http (+ 30 s deadline)', async () => {
    await http.run(work);
  })
  .add('cockatiel 3.2.1: retry', async () => {
    await cockatielRetry.execute(work);
  })
  .add('cockatiel 3.2.1: retry + breaker + timeout(30 s)', async () => {
    await cockatielFull.execute(work);
  })
  .add('opossum 9: breaker, no timeout', async () => {
    await opossumPlain.fire();
  })
  .add('opossum 9: breaker + timeout(30 s)', async () => {
    await opossumTimeout.fire();
  });

await bench.run();

const rows = bench.tasks.map((task) => {
  const result = task.result as { latency?: { mean: number } } | undefined;
  return { name: task.name, ns: (result?.latency?.mean ?? NaN) * 1e6 };
});
const raw = rows[0]!.ns;
console.log(`Node ${process.version}, ${time} ms per task`);
console.table(rows.map((row) => ({ task: row.name, 'ns/call': row.ns.toFixed(0), 'x raw': (row.ns / raw).toFixed(2) })));
opossumTimeout.shutdown();
opossumPlain.shutdown();
