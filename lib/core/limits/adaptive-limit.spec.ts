import { FakeClock } from '../time/fake-clock.js';
import { AdaptiveLimit, PROBE_SAMPLES, WINDOW_MS } from './adaptive-limit.js';
import { ConcurrencyLimiter, SlotOutcome } from './concurrency-limiter.js';
import { adaptiveSettings } from './limit-settings.js';

const bounds = { initial: 20, minimum: 2, maximum: 60 };

interface Window {
  inflight: number;
  latency: number;
  drops?: number;
  bound?: boolean;
}

/** A limit whose first window (it closes at its 10th sample) saw `latency` ms with nothing in flight to speak of. */
function primed(latency = 20): { limit: AdaptiveLimit; now: number } {
  const limit = new AdaptiveLimit(bounds, 0);
  limit.admitted(1);
  for (let i = 1; i <= 10; i++) limit.sample(i, latency, false);
  return { limit, now: 10 };
}

/** Feeds `windows` windows of 20 samples over 250 ms each; `drops` of each window's samples are drops. */
function feed(
  limit: AdaptiveLimit,
  start: number,
  windows: number,
  { inflight, latency, drops = 0, bound = false }: Window,
): number {
  let now = start;
  for (let w = 0; w < windows; w++) {
    limit.admitted(inflight);
    if (bound) limit.refused();
    for (let i = 0; i < 20; i++) {
      now += WINDOW_MS / 20;
      limit.sample(now, latency, i < drops);
    }
  }
  return now;
}

/** Feeds `count` probe samples of `latency` ms, each begun after the last ended. */
function probeWith(
  limit: AdaptiveLimit,
  start: number,
  latency: number,
  count = PROBE_SAMPLES,
): number {
  let now = start;
  for (let i = 0; i < count; i++) {
    now += latency;
    limit.sample(now, latency, false);
  }
  return now;
}

/**
 * A limit that learned a 0 % usual drop share from a full window, then saw drops rise where it binds
 * and probed: its no-load latency is `latency` ms, measured at 3 in flight.
 */
function probed(latency = 20): { limit: AdaptiveLimit; now: number } {
  const { limit, now: start } = primed(latency);
  let now = feed(limit, start, 1, { inflight: 5, latency });
  now = feed(limit, now, 1, { inflight: 20, latency: 3 * latency, drops: 5, bound: true });
  return { limit, now: probeWith(limit, now, latency) };
}

describe('AdaptiveLimit', () => {
  it('learns its no-load latency from its first 10 samples', () => {
    const { limit } = primed(20);
    expect(limit.noLoadLatency).toBe(20);
    expect(limit.limit).toBe(20); // in flight stayed under half the limit: no growth
  });

  it('never creeps toward the maximum while the application sends little', () => {
    const { limit, now } = primed();
    feed(limit, now, 400, { inflight: 5, latency: 20 });
    expect(limit.limit).toBe(20);
  });

  it('grows while in flight reaches half the limit, by max(1, √limit) a window, up to the maximum', () => {
    const { limit, now } = primed();
    const later = feed(limit, now, 1, { inflight: 10, latency: 20 });
    expect(limit.limit).toBe(24); // 20 + √20
    feed(limit, later, 200, { inflight: 60, latency: 20 });
    expect(limit.limit).toBe(60);
  });

  it('identical timeouts never make it grow, used or not', () => {
    const { limit, now } = primed();
    feed(limit, now, 50, { inflight: 20, latency: 100, drops: 20 });
    expect(limit.limit).toBeLessThanOrEqual(20);
    const fresh = new AdaptiveLimit(bounds, 0);
    feed(fresh, 0, 50, { inflight: 20, latency: 100, drops: 20, bound: true });
    expect(fresh.limit).toBeLessThanOrEqual(20);
  });

  it('shrinks on congestion — drops above the usual share with latency above 2 × no-load — by the gradient 2 × no-load / median', () => {
    const { limit, now } = probed(20);
    const later = feed(limit, now, 1, { inflight: 20, latency: 50, drops: 5, bound: true }); // ×0.8
    expect(limit.limit).toBe(16);
    feed(limit, later, 1, { inflight: 16, latency: 400, drops: 10, bound: true }); // ×0.1, floored at 0.5
    expect(limit.limit).toBe(8);
  });

  it('cuts by 0.9 at most, and never below the minimum', () => {
    const { limit, now } = probed(20);
    feed(limit, now, 1, { inflight: 20, latency: 41, drops: 5, bound: true }); // gradient 0.976 → 0.9
    expect(limit.limit).toBe(18);
    feed(limit, now + 1000, 6, { inflight: 60, latency: 1000, drops: 10, bound: true });
    expect(limit.limit).toBe(2);
  });

  it('measures its no-load latency at 3 in flight once drops rise where it binds, over what its windows under load showed', () => {
    // The first window already queued (74 ms, as overload 3× on 5 workers gave at 20 in flight).
    const { limit, now: start } = primed(74);
    let now = feed(limit, start, 1, { inflight: 5, latency: 74 });
    expect(limit.noLoadLatency).toBe(74);
    now = feed(limit, now, 1, { inflight: 20, latency: 130, drops: 8, bound: true });
    expect(limit.probing).toBe(true);
    expect(limit.limit).toBe(3);
    // An attempt that began before the probe queued behind the old limit: it does not count.
    limit.sample(now + 5, 140, false);
    now = probeWith(limit, now + 5, 20, PROBE_SAMPLES - 1);
    expect(limit.probing).toBe(true);
    now = probeWith(limit, now, 20, 1);
    expect(limit.probing).toBe(false);
    expect(limit.noLoadLatency).toBe(20);
    expect(limit.limit).toBe(20); // back to where it was
    // Now 130 ms with drops reads as 6.5 × the no-load latency: cut by the floor 0.5.
    feed(limit, now, 1, { inflight: 20, latency: 130, drops: 8, bound: true });
    expect(limit.limit).toBe(10);
  });

  it('takes the usual drop share from the probe: windows under load that taught a higher one no longer hide congestion', () => {
    const { limit, now: start } = primed(20);
    // Drops at 30 % from the first full window (an overload already queueing) are learned as usual.
    let now = feed(limit, start, 5, { inflight: 20, latency: 30, drops: 6, bound: true });
    const before = limit.limit;
    now = feed(limit, now, 1, { inflight: before, latency: 60, drops: 14, bound: true });
    expect(limit.probing).toBe(true);
    now = probeWith(limit, now, 20); // no drop among 20 at no load
    // 30 % drops at 3 × the no-load latency are congestion now: it shrinks.
    feed(limit, now, 1, { inflight: before, latency: 60, drops: 6, bound: true });
    expect(limit.limit).toBeLessThan(before);
  });

  it('probes at most once per 40 windows, and never where it does not bind', () => {
    const { limit, now: start } = probed(20);
    let now = feed(limit, start, 1, { inflight: 20, latency: 20, drops: 8 });
    expect(limit.probing).toBe(false); // not bound
    now = feed(limit, now, 1, { inflight: 20, latency: 30, drops: 8, bound: true });
    expect(limit.probing).toBe(false); // 2 windows after the last probe: it cuts instead
    now = feed(limit, now, 38, { inflight: 4, latency: 20 });
    feed(limit, now, 1, { inflight: 20, latency: 30, drops: 8, bound: true });
    expect(limit.probing).toBe(true);
  });

  it('does not take its usual drop share from its first 10 samples', () => {
    // No drop among the first 10 of a dependency failing 10 % on its own: not a 0 % usual share.
    const { limit, now } = primed(20);
    feed(limit, now, 1, { inflight: 20, latency: 50, drops: 2, bound: true });
    expect(limit.probing).toBe(false);
    expect(limit.limit).toBeGreaterThanOrEqual(20);
  });

  it('does not shrink for slower answers alone (the dependency slower for everyone): it keeps growing while used', () => {
    const { limit, now } = primed(20);
    feed(limit, now, 1, { inflight: 20, latency: 60, bound: true });
    expect(limit.limit).toBe(24);
  });

  it('does not shrink for drops alone at no-load latency (a dependency failing a share on its own), and learns them as usual', () => {
    const { limit, now } = primed(20);
    const later = feed(limit, now, 20, { inflight: 20, latency: 20, drops: 6, bound: true });
    expect(limit.limit).toBeGreaterThanOrEqual(20);
    // 30 % drops are now the usual share: with latency risen too, they are still no congestion.
    const before = limit.limit;
    feed(limit, later, 1, { inflight: before, latency: 60, drops: 6, bound: true });
    expect(limit.limit).toBeGreaterThanOrEqual(before);
  });

  it('does not shrink where it does not bind (lowering an unused limit changes nothing)', () => {
    const { limit, now } = primed(20);
    feed(limit, now, 20, { inflight: 8, latency: 80, drops: 10 });
    expect(limit.limit).toBe(20);
  });

  it('keeps what it learned when re-bounded, its limit clamped into the new bounds', () => {
    const { limit } = primed(20);
    limit.rebound({ initial: 5, minimum: 1, maximum: 10 });
    expect(limit.limit).toBe(10);
    expect(limit.noLoadLatency).toBe(20);
  });
});

describe('ConcurrencyLimiter (adaptive)', () => {
  it('learns nothing while paused (a saturated event loop)', async () => {
    const clock = new FakeClock();
    let paused = true;
    const limiter = new ConcurrencyLimiter(
      adaptiveSettings({ initial: 4, maximum: 50 }, 'limit'),
      clock,
      () => paused,
    );
    const cycle = async (): Promise<void> => {
      for (let i = 0; i < 40; i++) {
        for (let j = 0; j < 4; j++) limiter.tryAcquire();
        for (let j = 0; j < 4; j++) limiter.release(20, SlotOutcome.Answered);
        await clock.advance(10);
      }
    };
    await cycle();
    expect(limiter.limit).toBe(4);
    expect(limiter.snapshot().noLoadLatency).toBeUndefined();
    paused = false;
    await cycle();
    expect(limiter.limit).toBeGreaterThan(4);
    expect(limiter.snapshot().noLoadLatency).toBe(20);
  });
});
