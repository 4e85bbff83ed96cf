import { describe, expect, it } from '@jest/globals';
import { type RunRecord, type RunSummary, summarize } from '../sample/01-storm-demo/report.js';
import { PerSecond, Timeline } from '../sample/01-storm-demo/timeline.js';
import { EXIT_CODES, judge, verdictText } from '../sample/01-storm-demo/verdict.js';

/**
 * The storm demo's verdict: it judges the retry budget by the two runs' numbers, and only after
 * checking that each run measured the library rather than a starved machine.
 */

// The shape of a full run on a machine that kept up (numbers from a real run at load average 2).
const run = (changes: Partial<RunSummary> = {}): RunSummary => ({
  calls: 3750,
  dependencyRequests: 3966,
  loadMultiplier: 1.058,
  worstSecond: 1.243,
  availability: 0.6776,
  degradedLoadMultiplier: 1.082,
  healthyAvailability: 1,
  machine: { loopDelayP99Ms: 40, loopDelayMaxMs: 120, cpuPerSecond: 0.3, cpuWaitShare: 0.57 },
  ...changes,
});
const lagging = (summary: RunSummary, loopDelayP99Ms: number): RunSummary => ({
  ...summary,
  machine: { ...summary.machine, loopDelayP99Ms },
});
const waiting = (summary: RunSummary, cpuWaitShare: number | null): RunSummary => ({
  ...summary,
  machine: { ...summary.machine, cpuWaitShare },
});
const on = run();
const off = run({
  dependencyRequests: 6580,
  loadMultiplier: 1.755,
  worstSecond: 2.371,
  availability: 0.7453,
  degradedLoadMultiplier: 2.256,
});

describe('storm demo verdict', () => {
  it('holds when the budget keeps the degraded load at most 1.2x and below the run without it', () => {
    expect(judge(on, off)).toEqual({
      kind: 'held',
      reasons: [
        'with the budget on the dependency got 1.08x its calls while degraded (at most 1.20x)',
        'with the budget off it got 2.26x (more than with it on)',
        'worst second: 1.24x with the budget on, 2.37x off (lower with it on)',
      ],
    });
    expect(EXIT_CODES.held).toBe(0);
  });

  it('does not hold when the budget lets the degraded load past 1.2x, naming only the failed checks', () => {
    const leaky = run({ degradedLoadMultiplier: 1.35 });
    expect(judge(leaky, off)).toEqual({
      kind: 'notHeld',
      reasons: [
        'with the budget on the dependency got 1.35x its calls while degraded (at most 1.20x)',
      ],
    });
    expect(EXIT_CODES.notHeld).toBe(4);
  });

  it('does not hold when the run without the budget amplified no more than the run with it', () => {
    expect(judge(on, run({ degradedLoadMultiplier: 1.05, worstSecond: 1.3 }))).toEqual({
      kind: 'notHeld',
      reasons: ['with the budget off it got 1.05x (more than with it on)'],
    });
    expect(judge(on, run({ degradedLoadMultiplier: 2.1, worstSecond: 1.243 })).reasons).toEqual([
      'worst second: 1.24x with the budget on, 1.24x off (lower with it on)',
    ]);
  });

  it('calls a run that lost healthy-phase calls while it waited for a CPU a machine too slow, whatever the load numbers say', () => {
    // The shape of the reported failure: 15 % 2xx with the dependency healthy, and the budget looking fine.
    const starved = waiting(run({ healthyAvailability: 0.15 }), 0.92);
    expect(judge(starved, off)).toEqual({
      kind: 'machineTooSlow',
      reasons: [
        'budget on: with the dependency healthy only 15.0% of calls got a 2xx (a machine that keeps up answers at least 95.0%); it waited for a CPU 92.0% of the time it was ready to run',
      ],
    });
    expect(EXIT_CODES.machineTooSlow).toBe(5);
  });

  it('calls a run whose event loop ran more than 250 ms late (p99) a machine too slow, even with every healthy call answered', () => {
    expect(judge(on, lagging(off, 251)).reasons).toEqual([
      'budget off: the event loop ran 251 ms late (p99; at most 250 ms for the timings to hold); it waited for a CPU 57.0% of the time it was ready to run',
    ]);
    expect(judge(on, lagging(off, 250)).kind).toBe('held');
    expect(judge(run({ healthyAvailability: 0.95 }), off).kind).toBe('held');
    expect(judge(run({ healthyAvailability: 0.9499 }), off).kind).toBe('machineTooSlow');
  });

  it('blames the app, not the machine, for healthy-phase failures while the CPU was there (waited under half its ready time)', () => {
    // A regression that fails calls to the healthy dependency must not pass as a busy machine.
    expect(judge(waiting(run({ healthyAvailability: 0.4 }), 0.49), off)).toEqual({
      kind: 'notHeld',
      reasons: [
        'budget on: with the dependency healthy only 40.0% of calls got a 2xx (a machine that keeps up answers at least 95.0%), yet it waited for a CPU only 49.0% of the time it was ready to run: the app, not the machine',
      ],
    });
    expect(judge(waiting(run({ healthyAvailability: 0.4 }), 0.5), off).kind).toBe('machineTooSlow');
    // An event loop held up by the process's own work is the app's too.
    expect(judge(on, waiting(lagging(off, 900), 0.05)).kind).toBe('notHeld');
  });

  it('puts a distorted run down to the machine where the system cannot tell how long it waited for a CPU', () => {
    expect(judge(waiting(run({ healthyAvailability: 0.15 }), null), off)).toEqual({
      kind: 'machineTooSlow',
      reasons: [
        'budget on: with the dependency healthy only 15.0% of calls got a 2xx (a machine that keeps up answers at least 95.0%)',
      ],
    });
  });

  it('checks the machine before the library: a starved run that also amplified is not blamed on the budget', () => {
    const verdict = judge(
      waiting(run({ healthyAvailability: 0.5, degradedLoadMultiplier: 1.9 }), 0.9),
      off,
    );
    expect(verdict.kind).toBe('machineTooSlow');
  });

  it('prints a too-slow verdict with the load average, saying the numbers measure the machine', () => {
    const text = verdictText(judge(waiting(run({ healthyAvailability: 0.15 }), null), off), {
      loadAverage: 10.2,
      cores: 2,
    });
    expect(text.split('\n')).toEqual([
      'verdict: none — this machine was too slow for the numbers above to mean anything (load average 10.2 on 2 cores). ' +
        'They measure the machine, not the library; run the demo again when the machine is less busy',
      '  - budget on: with the dependency healthy only 15.0% of calls got a 2xx (a machine that keeps up answers at least 95.0%)',
    ]);
    expect(verdictText(judge(on, off), { loadAverage: 1, cores: 2 }).split('\n')[0]).toBe(
      'verdict: the retry budget held',
    );
  });
});

describe('storm demo machine check (healthy-phase 2xx)', () => {
  const timeline = new Timeline([
    { name: 'healthy', seconds: 3 },
    { name: 'degraded', seconds: 2 },
  ]);
  const record = (sent: number[], succeeded: number[]): RunRecord => {
    const load = {
      sent: new PerSecond(),
      succeeded: new PerSecond(),
      skipped: 0,
      statuses: new Map(),
    };
    sent.forEach((n, s) => load.sent.add(s, n));
    succeeded.forEach((n, s) => load.succeeded.add(s, n));
    const dependency = { received: new PerSecond(), calls: new PerSecond(), seen: new Map() };
    return {
      load,
      dependency,
      timeline,
      rate: 150,
      machine: { loopDelayP99Ms: 0, loopDelayMaxMs: 0, cpuPerSecond: 0, cpuWaitShare: null },
    };
  };

  it('is the 2xx share of calls sent in the healthy seconds, leaving out the last one (its calls meet the degraded dependency)', () => {
    // Seconds 0 and 1 count (300 sent, 285 answered 2xx); second 2's 20 failures and the degraded seconds do not.
    expect(
      summarize(record([150, 150, 150, 150, 150], [140, 145, 130, 70, 80])).healthyAvailability,
    ).toBe(0.95);
  });

  it('counts a one-second healthy phase whole', () => {
    const short = new Timeline([{ name: 'healthy', seconds: 1 }]);
    expect(summarize({ ...record([100], [25]), timeline: short }).healthyAvailability).toBe(0.25);
  });
});
