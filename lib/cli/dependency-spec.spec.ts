import { parseDependencySpec } from './dependency-spec.js';
import { scenario } from './scenarios.js';

describe('--dependency: the modelled dependency', () => {
  it('reads durations, counts and the failure share', () => {
    expect(parseDependencySpec('p50=40ms,p99=400ms,timeout=1s,workers=200,failures=0.1')).toEqual({
      p50: 40,
      p99: 400,
      timeout: 1000,
      workers: 200,
      failures: 0.1,
    });
    expect(parseDependencySpec('timeout=none,queue=none,p50=5')).toEqual({
      timeout: Infinity,
      queue: Infinity,
      p50: 5,
    });
    expect(parseDependencySpec('queue=0')).toEqual({ queue: 0 });
  });

  it('replaces the scenario dependency’s numbers and keeps its fault', () => {
    const { dependency } = scenario(
      'brownout',
      300_000,
      500,
      parseDependencySpec('p50=40ms,p99=400ms,timeout=1s,workers=200,failures=0.1'),
    );
    expect(dependency.toString()).toBe(
      'healthy p50 40ms p99 400ms, 200 workers, timeout 1000ms; failing 10%; brownout ×8 30s–90s',
    );
    expect(
      scenario('brownout', 300_000, 500, parseDependencySpec('p50=30ms')).dependency.toString(),
    ).toBe('healthy p50 30ms p99 300ms, 100 workers, timeout 150ms; brownout ×8 30s–90s');
    expect(scenario('brownout', 300_000, 500).dependency.toString()).toBe(
      'healthy p50 20ms p99 200ms, 100 workers, timeout 150ms; brownout ×8 30s–90s',
    );
  });

  it('names the key, the value and the rule of a bad pair', () => {
    expect(() => parseDependencySpec('p50=soon')).toThrow(
      '--dependency p50: "soon" is invalid: must be a finite duration in ms > 0',
    );
    expect(() => parseDependencySpec('workers=0')).toThrow(
      '--dependency workers: "0" is invalid: must be an integer >= 1',
    );
    expect(() => parseDependencySpec('failures=1.5')).toThrow(
      '--dependency failures: "1.5" is invalid: must be a share of requests in [0, 1]',
    );
    expect(() => parseDependencySpec('latency=4')).toThrow(
      '--dependency: "latency" is invalid: unknown key: must be one of p50, p99, timeout, workers, queue, failures',
    );
    expect(() => parseDependencySpec('p50=400ms,p99=100ms')).toThrow(
      '--dependency p99: 100 is invalid: must be at least p50 (400 ms)',
    );
    expect(() => parseDependencySpec('p50')).toThrow(
      '--dependency: "p50" is invalid: must be key=value pairs',
    );
  });
});
