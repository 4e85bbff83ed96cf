import { getEventListeners } from 'node:events';
import { Backoff, FakeClock, PolicyConfigError, Resilience, RetryBudget } from '../core/index.js';
import { Chaos, ChaosFaultError } from './chaos.js';
import { EventRecorder } from './event-recorder.js';
import { ScriptedFetch } from './scripted-fetch.js';

/** Runs `n` sequential calls and returns the pattern: 1 for a fault, 0 for a pass. */
async function pattern(chaos: Chaos, n: number): Promise<string> {
  const work = chaos.inject(async () => 'ok');
  let out = '';
  for (let i = 0; i < n; i++) {
    out += await work().then(
      () => '0',
      () => '1',
    );
  }
  return out;
}

function count(text: string, char: string): number {
  return text.split(char).length - 1;
}

describe('Chaos', () => {
  it('same seed and sequential calls give the same faults over 1000 calls; another seed differs', async () => {
    const a = await pattern(new Chaos({ seed: 42, faultRate: 0.3 }), 1000);
    const b = await pattern(new Chaos({ seed: 42, faultRate: 0.3 }), 1000);
    const c = await pattern(new Chaos({ seed: 43, faultRate: 0.3 }), 1000);
    expect(a).toBe(b);
    expect(c).not.toBe(a);
  });

  it('a known seed gives a pinned count: seed 42, faultRate 0.3 → exactly 279 faults of 1000', async () => {
    const chaos = new Chaos({ seed: 42, faultRate: 0.3 });
    const faults = await pattern(chaos, 1000);
    expect(count(faults, '1')).toBe(279);
    expect(faults.slice(0, 20)).toBe('11100010100001101010');
    expect(chaos.stats).toEqual({ calls: 1000, delayed: 0, faults: 279, statuses: 0 });
  });

  it('the fault pattern does not depend on latencyRate (two draws per call, latency first)', async () => {
    const clock = new FakeClock();
    const chaos = new Chaos({ seed: 42, faultRate: 0.3, latency: 1, latencyRate: 0.2, clock });
    const work = chaos.inject(async () => 'ok');
    let faults = '';
    for (let i = 0; i < 1000; i++) {
      const call = work().then(
        () => '0',
        () => '1',
      );
      await clock.advance(1);
      faults += await call;
    }
    expect(faults).toBe(await pattern(new Chaos({ seed: 42, faultRate: 0.3 }), 1000));
    expect(chaos.stats).toEqual({ calls: 1000, delayed: 208, faults: 279, statuses: 0 });
  });

  it('throws ChaosFaultError by default, a fresh one per fault', async () => {
    const work = new Chaos({ faultRate: 1 }).inject(async () => 'ok');
    const first = await work().catch((e: unknown) => e);
    const second = await work().catch((e: unknown) => e);
    expect(first).toBeInstanceOf(ChaosFaultError);
    expect(first).toMatchObject({ name: 'ChaosFaultError', message: 'fault injected by Chaos' });
    expect(second).not.toBe(first);
  });

  it('throws what the fault factory makes, without calling the wrapped function', async () => {
    let called = 0;
    const work = new Chaos({ faultRate: 1, fault: () => new RangeError('injected') }).inject(
      async () => called++,
    );
    await expect(work()).rejects.toThrow(new RangeError('injected'));
    expect(called).toBe(0);
  });

  it('outcome injection returns the outcome instead of calling the function', async () => {
    let called = 0;
    const chaos = new Chaos({ faultRate: 1, outcome: () => ({ status: 503 }) });
    const work = chaos.inject(async (): Promise<{ status: number }> => {
      called++;
      return { status: 200 };
    });
    await expect(work()).resolves.toEqual({ status: 503 });
    expect(called).toBe(0);
    expect(chaos.stats.faults).toBe(1);
  });

  it('passes arguments, `this` and the result through when nothing is injected', async () => {
    const target = {
      base: 10,
      add(x: number, y: number): Promise<number> {
        return Promise.resolve(this.base + x + y);
      },
    };
    target.add = new Chaos({ faultRate: 0 }).inject(target.add);
    await expect(target.add(1, 2)).resolves.toBe(13);
  });

  it('slows a call by `latency` on the clock: not started at 99 ms, done at 100', async () => {
    const clock = new FakeClock();
    let started = 0;
    const work = new Chaos({ latency: 100, latencyRate: 1, clock }).inject(async () => {
      started++;
      return 'ok';
    });
    let value: string | undefined;
    void work().then((v) => (value = v));
    await clock.advance(99);
    expect(started).toBe(0);
    await clock.advance(1);
    expect(started).toBe(1);
    expect(value).toBe('ok');
    expect(clock.pending).toBe(0);
  });

  it('an abort of the first argument’s signal stops the latency at once, clearing timer and listener', async () => {
    const clock = new FakeClock();
    let started = 0;
    const work = new Chaos({ latency: 1_000, latencyRate: 1, clock }).inject(
      async (ctx: { signal: AbortSignal }) => {
        started++;
        return ctx.signal.aborted;
      },
    );
    const controller = new AbortController();
    const call = work({ signal: controller.signal });
    await clock.advance(10);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    expect(started).toBe(0);
    expect(clock.pending).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('also honours a signal passed as the first argument itself', async () => {
    const clock = new FakeClock();
    const work = new Chaos({ latency: 50, latencyRate: 1, clock }).inject(
      async (_signal: AbortSignal) => 'ok',
    );
    const call = work(AbortSignal.abort(new Error('already')));
    await expect(call).rejects.toThrow('already');
    expect(clock.pending).toBe(0);
  });

  it('reads the signal only when a call is slowed', async () => {
    const work = new Chaos({ faultRate: 0.5 }).inject(
      async (_ctx: { signal: AbortSignal }) => 'ok',
    );
    const ctx = {
      get signal(): AbortSignal {
        throw new Error('signal read');
      },
    };
    for (let i = 0; i < 20; i++)
      await work(ctx).catch((e: unknown) => expect(e).toBeInstanceOf(ChaosFaultError));
  });

  it('enabled: false returns the very same function and fetch, and draws nothing', () => {
    const fn = async (): Promise<number> => 1;
    const fetchFn = new ScriptedFetch().fetch;
    const chaos = new Chaos({ enabled: false, faultRate: 1 });
    expect(chaos.inject(fn)).toBe(fn);
    expect(chaos.fetch(fetchFn, { statusRate: 1 })).toBe(fetchFn);
    expect(chaos.stats.calls).toBe(0);
  });

  it('faults reach the real policy: classified Transient, retried, counted per attempt', async () => {
    const clock = new FakeClock();
    const recorder = new EventRecorder();
    const chaos = new Chaos({ faultRate: 1, clock });
    const policy = Resilience.default
      .with({ clock, attempts: 3, backoff: Backoff.none, budget: RetryBudget.none })
      .withListener(recorder.record);
    const result = await policy.tryRun(chaos.inject(async () => 'never'));
    expect(result.reason).toBe('attemptsExhausted');
    expect(result.error).toBeInstanceOf(ChaosFaultError);
    expect(result.attempts.map((a) => a.verdict)).toEqual(['Transient', 'Transient', 'Transient']);
    expect(recorder.kinds).toEqual([
      'attempt',
      'retrying',
      'attempt',
      'retrying',
      'attempt',
      'failed',
    ]);
    expect(chaos.stats).toEqual({ calls: 3, delayed: 0, faults: 3, statuses: 0 });
  });

  it('fetch: injects synthetic status responses with headers instead of sending the request', async () => {
    const transport = new ScriptedFetch().responds(200);
    const chaotic = new Chaos().fetch(transport.fetch, {
      statusRate: 1,
      headers: { 'Retry-After': '2' },
      body: 'busy',
    });
    const response = await chaotic('https://api.test/orders');
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('2');
    expect(response.url).toBe('https://api.test/orders');
    await expect(response.text()).resolves.toBe('busy');
    expect(transport.callCount).toBe(0);
  });

  it('fetch: a pinned mix for seed 7 (fault 0.1, status 0.25, three draws per request)', async () => {
    const transport = new ScriptedFetch().responds(200);
    const chaos = new Chaos({ seed: 7, faultRate: 0.1 });
    const chaotic = chaos.fetch(transport.fetch, { statusRate: 0.25, status: 429 });
    const seen: Record<string, number> = {};
    for (let i = 0; i < 1000; i++) {
      const key = await chaotic('https://api.test/').then(
        (r) => String(r.status),
        (e: Error) => e.name,
      );
      seen[key] = (seen[key] ?? 0) + 1;
    }
    expect(seen).toEqual({ ChaosFaultError: 92, '429': 226, '200': 682 });
    expect(transport.callCount).toBe(682);
    expect(chaos.stats).toEqual({ calls: 1000, delayed: 0, faults: 92, statuses: 226 });
  });

  it('fetch: latency obeys init.signal', async () => {
    const clock = new FakeClock();
    const transport = new ScriptedFetch().responds(200);
    const chaotic = new Chaos({ latency: 500, latencyRate: 1, clock }).fetch(transport.fetch);
    const controller = new AbortController();
    const call = chaotic('https://api.test/', { signal: controller.signal });
    await clock.advance(499);
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(transport.callCount).toBe(0);
    expect(clock.pending).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('validates options with PolicyConfigError naming field, value and rule', () => {
    expect(() => new Chaos({ faultRate: 1.5 })).toThrow(
      'faultRate: 1.5 is invalid: must be a number in [0, 1]',
    );
    expect(() => new Chaos({ latencyRate: -0.1 })).toThrow(
      'latencyRate: -0.1 is invalid: must be a number in [0, 1]',
    );
    expect(() => new Chaos({ faultRate: Number.NaN })).toThrow(
      'faultRate: NaN is invalid: must be a number in [0, 1]',
    );
    expect(() => new Chaos({ latency: -1 })).toThrow(
      'latency: -1 is invalid: must be a finite duration in ms >= 0',
    );
    expect(() => new Chaos({ seed: 0.5 })).toThrow(
      'seed: 0.5 is invalid: must be an integer in [0, 4294967295]',
    );
    expect(() => new Chaos({ faultrate: 0.1 } as never)).toThrow(
      'faultrate: 0.1 is invalid: is not a known Chaos option (enabled, faultRate, latency, latencyRate, outcome, fault, seed, clock)',
    );
    expect(() => new Chaos({ outcome: () => 1, fault: () => new Error() })).toThrow(
      PolicyConfigError,
    );
    expect(() => new Chaos({ enabled: 'yes' as never })).toThrow(
      'enabled: "yes" is invalid: must be true or false',
    );
    const chaos = new Chaos();
    const fetchFn = new ScriptedFetch().fetch;
    expect(() => chaos.fetch(fetchFn, { statusRate: 2 })).toThrow(
      'statusRate: 2 is invalid: must be a number in [0, 1]',
    );
    expect(() => chaos.fetch(fetchFn, { status: 600 })).toThrow(
      'status: 600 is invalid: must be an integer HTTP status in [200, 599]',
    );
    // Disabled chaos still refuses bad configuration.
    expect(() => new Chaos({ enabled: false, faultRate: 2 })).toThrow(PolicyConfigError);
  });
});
