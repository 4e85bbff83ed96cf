import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigService } from '@nestjs/config';
import { ConfigFileError } from '../config/config-file.js';
import { ResilienceConfigError } from '../config/resilience-config.error.js';
import { FakeClock } from '../core/index.js';
import { PolicyRegistry } from './policy-registry.js';
import type { ReloadEvent } from './reload-event.js';
import { ResilienceConfigSource } from './resilience-config-source.js';

const failing = (count: { n: number }) => () => {
  count.n++;
  return Promise.reject(new Error('down'));
};

/** Waits (bounded, on real time) for the kernel's file events to reach the watcher. */
async function until(predicate: () => boolean, what: string, bound = 3000): Promise<void> {
  const start = performance.now();
  while (!predicate()) {
    if (performance.now() - start > bound) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const yaml = (attempts: number | string, extra = '') => `policies:
  payments:
    attempts: ${attempts}
    budget: false
    backoff: { type: constant, delay: 100ms }
    breaker: { consecutiveFailures: 2, breakDuration: 10s, jitter: none }
${extra}`;

describe('PolicyRegistry reloads from a watched file', () => {
  let dir: string;
  let path: string;
  let clock: FakeClock;
  let registry: PolicyRegistry;
  let events: ReloadEvent[];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'nresilience-registry-'));
    path = join(dir, 'resilience.yaml');
    clock = new FakeClock();
    events = [];
  });
  afterEach(() => {
    registry?.onModuleDestroy();
    rmSync(dir, { recursive: true, force: true });
  });

  function start(text: string): PolicyRegistry {
    writeFileSync(path, text);
    registry = PolicyRegistry.create({ configFile: path, watch: true, clock });
    registry.onReload((event) => events.push(event));
    return registry;
  }

  /** Writes the file and lets the watcher's quiet period pass on the fake clock. */
  async function change(text: string): Promise<void> {
    const seen = events.length;
    writeFileSync(path, text);
    await until(() => clock.pending > 0 || events.length > seen, 'a file event');
    await clock.advance(250);
    await until(() => events.length > seen, 'the reload');
  }

  it('starts from the file, then applies each change; new calls make the new number of attempts', async () => {
    start(yaml(3));
    expect(registry.get('payments').options.attempts).toBe(3);
    await change(yaml(1, '  search: { preset: http }\n'));
    expect(events.map((e) => [e.kind, e.trigger, e.names])).toEqual([
      ['reloaded', 'file', ['payments', 'search']],
    ]);
    const count = { n: 0 };
    await registry.handle('payments').tryRun(failing(count));
    expect(count.n).toBe(1);
    expect(registry.reloadCounts).toEqual({ reloaded: 1, reloadFailed: 0 });
  });

  it('keeps the pinned breaker: an open breaker stays open with its break, adopting new thresholds', async () => {
    start(yaml(1));
    const breaker = registry.breaker('payments')!;
    const count = { n: 0 };
    await registry.handle('payments').tryRun(failing(count));
    await registry.handle('payments').tryRun(failing(count));
    expect(breaker.state).toBe('open');
    await clock.advance(4_000);
    await change(yaml(2).replace('consecutiveFailures: 2', 'consecutiveFailures: 4'));
    expect(registry.breaker('payments')).toBe(breaker);
    expect(breaker.settings.consecutiveFailures).toBe(4);
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot().breakRemaining).toBe(6_000 - 250);
  });

  it('an invalid change is refused with the path-precise error; the old policy and breaker state stay', async () => {
    start(yaml(1));
    const before = registry.get('payments');
    const count = { n: 0 };
    await registry.handle('payments').tryRun(failing(count));
    const snapshot = registry.breaker('payments')!.snapshot();
    await change(yaml(0));
    expect(events).toHaveLength(1);
    const [event] = events;
    expect([event!.kind, event!.trigger, event!.names]).toEqual([
      'reloadFailed',
      'file',
      ['payments'],
    ]);
    expect(event!.error).toBeInstanceOf(ConfigFileError);
    expect(event!.error!.message).toContain(
      `${path}: invalid config: Invalid resilience config (1 problem):`,
    );
    expect(event!.error!.message).toContain(
      'policies.payments.attempts: 0 is invalid: must be an integer >= 1',
    );
    expect((event!.error as ConfigFileError).cause).toBeInstanceOf(ResilienceConfigError);
    expect(registry.get('payments')).toBe(before);
    expect(registry.breaker('payments')!.snapshot()).toEqual(snapshot);
    await change('policies: [unclosed\n');
    expect(events.map((e) => [e.kind, (e.error as ConfigFileError | undefined)?.problem])).toEqual([
      ['reloadFailed', 'invalid'],
      ['reloadFailed', 'unparsable'],
    ]);
    expect(registry.reloadCounts).toEqual({ reloaded: 0, reloadFailed: 2 });
    await change(yaml(2));
    expect(registry.get('payments').options.attempts).toBe(2);
  });

  it('refuses a change that removes a name the application uses', async () => {
    start(yaml(3, '  search: {}\n'));
    registry.require(new Map([['search', ['@Resilient on Catalog.find']]]));
    await change(yaml(3));
    expect(events[0]!.kind).toBe('reloadFailed');
    expect(events[0]!.error!.message).toContain(
      'policies.search: undefined is invalid: is required: it is used by @Resilient on Catalog.find in the running application',
    );
    expect(registry.names()).toEqual(['payments', 'search']);
  });

  it('a call in flight finishes under the policy it started with; its outcome lands in the kept breaker', async () => {
    const slow = (attempts: number) =>
      yaml(attempts)
        .replace('consecutiveFailures: 2', 'consecutiveFailures: 10')
        .replace('delay: 100ms', 'delay: 1s');
    start(slow(3));
    const count = { n: 0 };
    let fail = true;
    const work = () => {
      count.n++;
      return fail ? Promise.reject(new Error('down')) : Promise.resolve('ok');
    };
    const inFlight = registry.handle('payments').tryRun(work); // attempt 1 fails, then a 1 s backoff
    await clock.advance(0);
    expect(count.n).toBe(1);
    await change(slow(1)); // applied at 250 ms, while the call sleeps
    expect(registry.get('payments').options.attempts).toBe(1);
    fail = false;
    await clock.advance(750);
    const result = await inFlight;
    expect([result.ok, result.attempts.length]).toEqual([true, 2]);
    expect(registry.breaker('payments')!.snapshot().tripWindowCalls).toBe(2);
    fail = true;
    const fresh = await registry.handle('payments').tryRun(work);
    expect([fresh.ok, fresh.attempts.length]).toEqual([false, 1]);
    expect(registry.breaker('payments')!.snapshot().tripWindowCalls).toBe(3);
  });

  it('stops watching on onModuleDestroy', async () => {
    start(yaml(3));
    registry.onModuleDestroy();
    writeFileSync(path, yaml(2));
    await new Promise((resolve) => setImmediate(resolve));
    await clock.advance(1000);
    expect(registry.get('payments').options.attempts).toBe(3);
    expect(clock.pending).toBe(0);
  });

  it('refuses to start on a missing or invalid file, naming it', () => {
    expect(() => PolicyRegistry.create({ configFile: join(dir, 'missing.yaml') })).toThrow(
      `${join(dir, 'missing.yaml')}: cannot be read (ENOENT)`,
    );
    writeFileSync(path, yaml('three'));
    expect(() => PolicyRegistry.create({ configFile: path })).toThrow(
      'policies.payments.attempts: "three" is invalid: must be an integer >= 1',
    );
  });
});

describe('PolicyRegistry config sources and triggers', () => {
  afterEach(() => process.removeAllListeners('SIGHUP'));

  it('reloads from @nestjs/config: set() calls in one tick apply once, together', async () => {
    const config = new ConfigService({ resilience: { policies: { payments: { attempts: 3 } } } });
    const registry = PolicyRegistry.create({
      configSource: ResilienceConfigSource.fromConfigService(config, 'resilience'),
    });
    const events: ReloadEvent[] = [];
    registry.onReload((event) => events.push(event));
    expect(registry.get('payments').options.attempts).toBe(3);
    config.set('resilience.policies.payments.attempts', 2);
    config.set('resilience.policies.orders', { attempts: 1 });
    config.set('unrelated', 'x');
    await Promise.resolve();
    expect(events.map((e) => [e.kind, e.trigger, e.names])).toEqual([
      ['reloaded', 'configSource', ['payments', 'orders']],
    ]);
    expect(registry.get('payments').options.attempts).toBe(2);
    config.set('resilience.policies.payments.attempts', -1);
    await Promise.resolve();
    expect(events[1]!.kind).toBe('reloadFailed');
    expect(events[1]!.error!.message).toContain('policies.payments.attempts: -1 is invalid');
    expect(registry.get('payments').options.attempts).toBe(2);
    registry.onModuleDestroy();
    config.set('resilience.policies.payments.attempts', 5);
    await Promise.resolve();
    expect(events).toHaveLength(2);
  });

  it('refresh() and SIGHUP (opt-in) re-read the source; the listener goes on destroy', async () => {
    let attempts = 3;
    const registry = PolicyRegistry.create({
      configSource: { read: () => ({ policies: { payments: { attempts } } }) },
      reloadOnSignal: 'SIGHUP',
    });
    const events: ReloadEvent[] = [];
    registry.onReload((event) => events.push(event));
    attempts = 2;
    await registry.refresh();
    expect(registry.get('payments').options.attempts).toBe(2);
    attempts = 4;
    expect(process.listenerCount('SIGHUP')).toBe(1);
    process.emit('SIGHUP', 'SIGHUP');
    expect(registry.get('payments').options.attempts).toBe(4);
    expect(events.map((e) => e.trigger)).toEqual(['refresh', 'signal']);
    registry.onModuleDestroy();
    expect(process.listenerCount('SIGHUP')).toBe(0);
  });

  it('describe(name) gives the resolved config; an unknown name throws', () => {
    const registry = PolicyRegistry.create({
      policies: {
        base: { extends: 'conservative', deadline: '2s' },
        orders: { extends: 'base', budget: { retryRatio: 0.05 } },
      },
    });
    expect(registry.describe('orders')).toMatchObject({
      preset: 'conservative',
      extends: ['base'],
      attempts: 2,
      deadline: 2000,
      budget: { retryRatio: 0.05, samplingDuration: 30_000, minimumThroughput: 100 },
    });
    expect(() => registry.describe('nope')).toThrow('nope');
  });

  it('reload(config) reports both outcomes with trigger api; refresh() without a source rejects', async () => {
    const registry = PolicyRegistry.create({ policies: { payments: {} } });
    const events: ReloadEvent[] = [];
    registry.onReload((event) => events.push(event));
    registry.onReload(() => {
      throw new Error('listener bug');
    });
    expect(() => registry.reload({ policies: { payments: { attempts: 0 } } })).toThrow(
      ResilienceConfigError,
    );
    registry.reload({ policies: { payments: { attempts: 2 } } });
    expect(events.map((e) => [e.kind, e.trigger])).toEqual([
      ['reloadFailed', 'api'],
      ['reloaded', 'api'],
    ]);
    await expect(registry.refresh()).rejects.toThrow(
      'PolicyRegistry.refresh(): nothing to read again',
    );
  });

  it('a reload refused by a fuzz-hardening rule keeps the old policies and their state', async () => {
    const clock = new FakeClock();
    const registry = PolicyRegistry.create({
      clock,
      policies: {
        payments: {
          attempts: 2,
          backoff: { type: 'none' },
          budget: { fraction: 0.5, minimumPerSecond: 1 },
        },
      },
    });
    const count = { n: 0 };
    await expect(registry.handle('payments').run(failing(count))).rejects.toThrow('down');
    expect(count.n).toBe(2);
    const level = registry.bucket('payments')!.level;
    // An empty YAML value (`fraction:`) is null: it used to be read as the default 0.1 and applied.
    const nulled = { policies: { payments: { attempts: 4, budget: { fraction: null } } } };
    expect(() => registry.reload(nulled as never)).toThrow(
      'Invalid resilience config (1 problem):\n  - policies.payments.budget.fraction: null is invalid: must be a number in [0, 1]',
    );
    const reserved = JSON.parse(
      '{ "policies": { "payments": { "attempts": 4 }, "__proto__": { "attempts": 9 } } }',
    ) as never;
    expect(() => registry.reload(reserved)).toThrow(
      'policies.__proto__: "__proto__" is invalid: a policy name must be a non-empty string other than __proto__, constructor, prototype',
    );
    expect(() => registry.reload({ policies: { payments: new Map() } } as never)).toThrow(
      'policies.payments: Map(0) is invalid: must be a plain object',
    );
    expect(registry.describe('payments')).toMatchObject({
      attempts: 2,
      budget: { fraction: 0.5, minimumPerSecond: 1 },
    });
    expect(registry.bucket('payments')!.level).toBe(level);
    await expect(registry.handle('payments').run(failing(count))).rejects.toThrow('down');
    expect(count.n).toBe(4);
    expect(registry.reloadCounts).toEqual({ reloaded: 0, reloadFailed: 3 });
  });

  it('names every problem of the reload options', () => {
    const attempt = () =>
      PolicyRegistry.create({
        policies: { payments: {} },
        watch: { debounce: -1 },
        reloadOnSignal: 'SIGTERM' as never,
        configFile: '',
      } as never);
    expect(attempt).toThrow(ResilienceConfigError);
    try {
      attempt();
    } catch (error) {
      expect((error as ResilienceConfigError).problems.map((p) => p.message)).toEqual([
        'configFile: "" is invalid: must be the path of a YAML or JSON file (relative to the working directory)',
        'policies: {"payments":{}} is invalid: cannot be given with configFile: the config comes from there',
        'watch.debounce: -1 is invalid: must be a finite duration in ms >= 0',
        'reloadOnSignal: "SIGTERM" is invalid: must be \'SIGHUP\' (or left out)',
      ]);
    }
    expect(() => PolicyRegistry.create({ policies: { payments: {} }, watch: true })).toThrow(
      'watch: true is invalid: needs configFile: it watches that file',
    );
    const watching = (watch: unknown) => () =>
      PolicyRegistry.create({ configFile: 'resilience.yaml', watch } as never);
    expect(watching({ debounce: Infinity })).toThrow(
      'watch.debounce: Infinity is invalid: must be a finite duration in ms >= 0',
    );
    expect(watching({ debounce: null })).toThrow(
      'watch.debounce: null is invalid: must be a finite duration in ms >= 0',
    );
    expect(watching({ debounc: 100 })).toThrow(
      'watch.debounc: 100 is invalid: is not a known watch option (debounce)',
    );
    expect(watching('yes')).toThrow('watch: "yes" is invalid: must be true, false or { debounce }');
    expect(watching(new Map())).toThrow(
      /^Invalid resilience config \(1 problem\):\n {2}- watch: Map\(0\) is invalid: must be a plain object /,
    );
  });
});
