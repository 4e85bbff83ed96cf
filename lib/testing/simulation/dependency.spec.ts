import { PolicyConfigError } from '../../core/index.js';
import { SeededRandom } from '../seeded-random.js';
import {
  Dependency,
  DependencyFailureError,
  DependencyOverloadedError,
  DependencyTimeoutError,
} from './dependency.js';
import { LogNormalLatency } from './latency.js';
import { VirtualClock } from './virtual-clock.js';

/** Fires every due timer, letting promise callbacks run between instants. */
async function runAll(clock: VirtualClock): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  while (clock.fireDue()) await new Promise((resolve) => setImmediate(resolve));
}

function outcome(promise: Promise<void>, clock: VirtualClock, into: string[], label: string): void {
  promise.then(
    () => into.push(`${label} ok@${clock.now()}`),
    (error: Error) => into.push(`${label} ${error.name}@${clock.now()}`),
  );
}

describe('LogNormalLatency', () => {
  it('is fitted to the two quantiles', () => {
    const latency = new LogNormalLatency(20, 200);
    const random = new SeededRandom(3).next;
    const samples = Array.from({ length: 40_000 }, () => latency.sample(random)).sort(
      (a, b) => a - b,
    );
    expect(samples[20_000]! / 20).toBeCloseTo(1, 1);
    expect(samples[39_600]! / 200).toBeGreaterThan(0.9);
    expect(samples[39_600]! / 200).toBeLessThan(1.1);
  });

  it('is constant when p99 equals p50, and refuses bad quantiles', () => {
    expect(new LogNormalLatency(7, 7).sample(Math.random)).toBe(7);
    expect(() => new LogNormalLatency(0, 10)).toThrow(
      new PolicyConfigError('p50', 0, 'must be a finite duration in ms > 0'),
    );
    expect(() => new LogNormalLatency(20, 10)).toThrow(
      'p99: 10 is invalid: must be a finite latency in ms >= p50 (20)',
    );
  });
});

describe('Dependency', () => {
  it('validates every parameter, naming the field', () => {
    expect(() => Dependency.healthy({ p50: 20, p99: 200, capacity: { concurrency: 0 } })).toThrow(
      'capacity.concurrency: 0 is invalid',
    );
    expect(() =>
      Dependency.healthy({ p50: 20, p99: 200, capacity: { concurrency: 1, burst: 2 } as never }),
    ).toThrow('capacity.burst');
    const healthy = Dependency.healthy({ p50: 20, p99: 200 });
    expect(() => healthy.brownout({ after: 0, slower: 0.5, lasting: 10 })).toThrow(
      'slower: 0.5 is invalid',
    );
    expect(() => healthy.outage({ after: -1, lasting: 10 })).toThrow('after: -1 is invalid');
    expect(() => healthy.failing(2)).toThrow('rate: 2 is invalid');
  });

  it('says the rule of a bad duration, resolution or capacity', () => {
    const healthy = (options: object) => () =>
      Dependency.healthy({ p50: 20, p99: 200, ...options });
    expect(healthy({ resolution: 0 })).toThrow(
      'resolution: 0 is invalid: must be a finite duration in ms > 0',
    );
    expect(healthy({ resolution: null })).toThrow(
      'resolution: null is invalid: must be a finite duration in ms > 0',
    );
    expect(healthy({ capacity: { concurrency: 1.5 } })).toThrow(
      'capacity.concurrency: 1.5 is invalid: must be an integer >= 1 (or Infinity)',
    );
    expect(healthy({ capacity: { concurrency: 1, queue: -1 } })).toThrow(
      'capacity.queue: -1 is invalid: must be an integer >= 0 (or Infinity)',
    );
    expect(healthy({ capacity: { concurrency: 1, timeout: 0 } })).toThrow(
      'capacity.timeout: 0 is invalid: must be a duration in ms > 0 (or Infinity)',
    );
    expect(
      Dependency.healthy({ p50: 20, p99: 200 }).withCapacity({
        concurrency: Infinity,
        queue: Infinity,
        timeout: Infinity,
      }),
    ).toBeInstanceOf(Dependency);
    expect(() =>
      Dependency.healthy({ p50: 20, p99: 200 }).outage({ after: 0, lasting: Infinity }),
    ).toThrow('lasting: Infinity is invalid: must be a finite duration in ms > 0');
  });

  it('combines into new values and reports its fault window', () => {
    const healthy = Dependency.healthy({ p50: 20, p99: 200 });
    const impaired = healthy
      .brownout({ after: 30_000, slower: 8, lasting: 60_000 })
      .outage({ after: 100_000, lasting: 5_000, errorRate: 0.5 });
    expect(healthy.faultWindow).toBeUndefined();
    expect(impaired.faultWindow).toEqual({ start: 30_000, end: 105_000 });
    expect(impaired.toString()).toBe(
      'healthy p50 20ms p99 200ms; brownout ×8 30s–90s; outage 50% 100s–105s',
    );
    const conditions = { slower: 0, errorRate: 0 };
    impaired.failing(0.5).conditionsAt(102_000, conditions);
    expect(conditions).toEqual({ slower: 1, errorRate: 0.75 });
    impaired.conditionsAt(40_000, conditions);
    expect(conditions).toEqual({ slower: 8, errorRate: 0 });
  });

  it('a tail makes a share of requests slower for the whole run, with no fault window', async () => {
    const tailed = Dependency.healthy({ p50: 10, p99: 10 }).tail({ share: 0.25, slower: 20 });
    expect(tailed.faultWindow).toBeUndefined();
    expect(tailed.toString()).toBe('healthy p50 10ms p99 10ms; tail 25% ×20');
    const clock = new VirtualClock();
    const draws = [0.1, 0.9];
    let i = 0;
    // p50 = p99: the latency is constant (no draw); each request's one draw decides the tail.
    const live = tailed.start(clock, () => draws[i++ % draws.length]!);
    const log: string[] = [];
    outcome(live.request(undefined), clock, log, 'slow');
    outcome(live.request(undefined), clock, log, 'fast');
    await runAll(clock);
    expect(log).toEqual(['fast ok@10', 'slow ok@200']);
    expect(() => Dependency.healthy({ p50: 10, p99: 10 }).tail({ share: 0, slower: 2 })).toThrow(
      'share: 0 is invalid: must be a share of requests in (0, 1]',
    );
    expect(() =>
      Dependency.healthy({ p50: 10, p99: 10 }).tail({ share: 0.1, slower: 0.5 }),
    ).toThrow('slower: 0.5 is invalid: must be a finite multiplier >= 1');
  });

  it('queues past its concurrency, refuses past its queue, and times out at its server timeout', async () => {
    const clock = new VirtualClock();
    const live = Dependency.healthy({
      p50: 10,
      p99: 10,
      capacity: { concurrency: 1, queue: 1, timeout: 25 },
    }).start(clock, Math.random);
    const log: string[] = [];
    outcome(live.request(undefined), clock, log, 'a'); // served 0–10
    outcome(live.request(undefined), clock, log, 'b'); // queued, served 10–20
    outcome(live.request(undefined), clock, log, 'c'); // queue full: refused at once
    await runAll(clock);
    clock.setTimer(0, () => {
      outcome(live.request(undefined), clock, log, 'd'); // 20–30
      outcome(live.request(undefined), clock, log, 'e'); // queued, served 30–40 (inside its 25 ms timeout: 20 + 25 = 45)
      outcome(live.request(undefined), clock, log, 'f'); // queue full: refused at once
    });
    await runAll(clock);
    expect(log).toEqual([
      'c DependencyOverloadedError@0',
      'a ok@10',
      'b ok@20',
      'f DependencyOverloadedError@20',
      'd ok@30',
      'e ok@40',
    ]);
    expect(live.overloaded).toBe(2);

    const slow = Dependency.healthy({
      p50: 10,
      p99: 10,
      capacity: { concurrency: 1, timeout: 15 },
    }).start(clock, Math.random);
    const more: string[] = [];
    outcome(slow.request(undefined), clock, more, 'g'); // 40–50
    outcome(slow.request(undefined), clock, more, 'h'); // starts at 50, would end 60 > 40+15: fails at 55
    outcome(slow.request(undefined), clock, more, 'i'); // still queued at 55: fails then
    await runAll(clock);
    // h and i both fail at 55; i's queue timer was set first (at 40), so it fires first.
    expect(more).toEqual(['g ok@50', 'i DependencyTimeoutError@55', 'h DependencyTimeoutError@55']);
    expect(slow.timedOut).toBe(2);
    expect(new DependencyTimeoutError('x')).toBeInstanceOf(Error);
    expect(new DependencyOverloadedError('x').name).toBe('DependencyOverloadedError');
  });

  it('slows requests arriving in a brownout and fails requests in an outage', async () => {
    const clock = new VirtualClock();
    const live = Dependency.healthy({ p50: 10, p99: 10 })
      .brownout({ after: 100, slower: 4, lasting: 100 })
      .outage({ after: 300, lasting: 100 })
      .start(clock, new SeededRandom(1).next);
    const log: string[] = [];
    for (const at of [0, 150, 350])
      clock.setTimer(at, () => outcome(live.request(undefined), clock, log, `t${at}`));
    await runAll(clock);
    expect(log).toEqual(['t0 ok@10', 't150 ok@190', 't350 DependencyFailureError@360']);
    expect(live.failed).toBe(1);
    expect(new DependencyFailureError('x').name).toBe('DependencyFailureError');
  });

  it('lets an aborted request leave its worker at once, so the next one starts', async () => {
    const clock = new VirtualClock();
    const live = Dependency.healthy({ p50: 100, p99: 100, capacity: { concurrency: 1 } }).start(
      clock,
      Math.random,
    );
    const controller = new AbortController();
    const log: string[] = [];
    outcome(live.request(controller.signal), clock, log, 'a');
    outcome(live.request(undefined), clock, log, 'b');
    clock.setTimer(30, () => controller.abort(new Error('attempt timeout')));
    await runAll(clock);
    expect(log).toEqual(['a Error@30', 'b ok@130']);
    expect(live.abandoned).toBe(1);
    expect(live.busy).toBe(0);
  });
});
