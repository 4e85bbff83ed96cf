import {
  CallRejectedError,
  Classifier,
  DeadlineExceededError,
  GUARDED_PAUSE_MS,
  PolicyConfigError,
  RelayedRefusalError,
  Resilience,
} from '../../core/index.js';
import { HopAnswerError } from './chain.js';
import { ChainMatrix, naiveHop } from './chain-matrix.js';
import { Dependency } from './dependency.js';
import { Load } from './load.js';
import { Simulate } from './simulate.js';

const database = Dependency.healthy({
  p50: 20,
  p99: 200,
  capacity: { concurrency: 20, timeout: 1000 },
});
const naive = naiveHop(Resilience.default);
const chain = (
  hop: typeof naive,
  hops: number,
  dependency = database,
  seconds = 5,
  perSecond = 50,
) =>
  Simulate.chain(Array.from({ length: hops }, () => hop))
    .against(dependency)
    .under(Load.constant({ perSecond }))
    .for(seconds * 1000);

describe('Simulate.chain', () => {
  it('a healthy chain sends one request per call to every hop and the database', async () => {
    const report = await chain(Resilience.default, 3).run(1);
    expect(report.calls).toBe(250);
    expect(report.requestsPerCall).toEqual([1, 1, 1, 1]);
    expect(report.availability).toBe(1);
    // Marked requests: every hop below the frontend gets its caller's first attempt marked.
    expect(report.nestedRetry).toEqual([0, 250, 250]);
  });

  it('naive retries multiply per hop against a dead database: 3, 9, 27 (and 4 attempts: 64)', async () => {
    const three = await chain(naive, 3, database.failing(1)).run(1);
    expect(three.requestsPerCall).toEqual([1, 3, 9, 27]);
    expect(three.availability).toBe(0);
    // Only first attempts carry the marker: hop 2 sees one per call, hop 3 one per hop-2 call (3).
    expect(three.nestedRetry).toEqual([0, 250, 750]);
    const four = await chain(naive.with({ attempts: 4 }), 3, database.failing(1)).run(1);
    expect(four.bottomAmplification).toBe(64);
  });

  it('per-hop retry budgets keep a dead database near one request per call; refusals relayed up are not retried above', async () => {
    const report = await chain(Resilience.default, 3, database.failing(1), 20, 100).run(1);
    expect(report.requestsPerCall.map((r) => r.toFixed(3))).toEqual([
      '1.000',
      '1.000',
      '1.006',
      '1.050',
    ]);
    expect(report.availability).toBe(0);
  });

  it('a call refused below answers through three hops within about one guarded pause (relayed up at once, not paused at every hop)', async () => {
    const report = await chain(Resilience.default, 3, database.failing(1), 20, 100).run(1);
    // Median: the data service's failed query (~20 ms) and its one 100 ms guarded pause; a pause at
    // every hop would be ~300 ms.
    expect(report.latency(0.5)).toBe(121);
    expect(report.latency(0.5)).toBeLessThan(GUARDED_PAUSE_MS + 50);
  });

  it("nested 'singleShot': a marked request is sent on with one attempt, still marked, so the hop below does not retry it either", async () => {
    const report = await chain(naive, 3, database.failing(1)).run(1, { nested: 'singleShot' });
    // The frontend's first attempt reaches the database once; its two retries arrive unmarked (the
    // marker is on first attempts only) and hop 2 retries them in full: 1 + 7 + 7 = 15, not 27.
    expect(report.requestsPerCall).toEqual([1, 3, 7, 15]);
    expect(report.nested).toBe('singleShot');
  });

  it('is deterministic: the same seed gives the same report', async () => {
    const a = await chain(Resilience.default, 3, database.failing(0.5)).run(7);
    const b = await chain(Resilience.default, 3, database.failing(0.5)).run(7);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
  });

  it('refuses bad input naming the field', async () => {
    expect(() => Simulate.chain([])).toThrow(
      new PolicyConfigError('hops', [], 'must be an array of 1 to 8 policies, frontend first'),
    );
    expect(() => Simulate.chain([Resilience.default, 'x' as never])).toThrow(PolicyConfigError);
    await expect(
      Simulate.chain([Resilience.default])
        .under(Load.constant({ perSecond: 1 }))
        .for(1000)
        .run(1),
    ).rejects.toThrow('dependency');
    await expect(chain(naive, 1).run(1, { nested: 'never' as never })).rejects.toThrow(
      "nested: \"never\" is invalid: must be 'report' or 'singleShot'",
    );
  });
});

describe('HopAnswerError: a lower hop failure as the hop above reads it', () => {
  it('a refusal is a 503 with Retry-After and our problem type; a deadline 504; anything else 502', () => {
    const refusal = HopAnswerError.of(new CallRejectedError('BudgetExhausted', 1200));
    expect([
      refusal.status,
      refusal.reason,
      refusal.headers.get('retry-after'),
      refusal.headers.get('content-type'),
    ]).toEqual([503, 'BudgetExhausted', '2', 'application/problem+json']);
    expect(Classifier.http.classifyError(refusal, { attempt: 1 } as never)).toMatchObject({
      kind: 'Throttled',
      retryAfter: 2000,
    });
    expect(HopAnswerError.of(new DeadlineExceededError(100)).status).toBe(504);
    expect(HopAnswerError.of(new Error('boom')).status).toBe(502);
    // A refusal relayed from further down is answered as it came; a 502 or 504 from below is this hop's 502.
    const relayed = HopAnswerError.of(
      new RelayedRefusalError('DependencyUnavailable', 3000, 'hop 3'),
    );
    expect([relayed.status, relayed.reason, relayed.headers.get('retry-after')]).toEqual([
      503,
      'DependencyUnavailable',
      '3',
    ]);
    expect(HopAnswerError.of(new HopAnswerError(504, 'DeadlineExceeded', undefined)).status).toBe(
      502,
    );
  });
});

describe('ChainMatrix', () => {
  it('reports naive and policy rows per scenario', async () => {
    const matrix = await ChainMatrix.run(Resilience.default.with({ name: 'svc' }), {
      hops: 2,
      scenarios: ['database-down'],
      rate: 100,
    });
    expect(matrix.cell('database-down', 'naive', 1).requestsPerCall).toEqual([1, 3, 9]);
    expect(matrix.cell('database-down', 'policy', 1).bottomAmplification).toBeLessThan(1.3);
    expect(matrix.toString().split('\n')[0]).toBe(
      'Chain matrix — 2 hops of policy svc vs naive retries: 100 calls/s, seeds 1',
    );
    await expect(ChainMatrix.run(Resilience.default, { hops: 9 })).rejects.toThrow(
      'hops: 9 is invalid: must be an integer in [1, 8] (services in the chain)',
    );
    await expect(ChainMatrix.run(Resilience.default, { scenarios: ['nope'] })).rejects.toThrow(
      'scenario',
    );
  });
});
