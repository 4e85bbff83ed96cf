import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { getEventListeners } from 'node:events';
import { Observable, firstValueFrom, lastValueFrom, of, throwError } from 'rxjs';
import { FakeClock } from '../core/index.js';
import { AttemptSignal } from './attempt-signal.decorator.js';
import { PolicyRegistry } from './policy-registry.js';
import { bindRegistry, unbindRegistry } from './resilient-binding.js';
import { RESILIENT_POLICY_METADATA } from './resilience.constants.js';
import { Resilient } from './resilient.decorator.js';
import { UnknownPolicyError } from './unknown-policy.error.js';

const clock = new FakeClock();
let registry: PolicyRegistry | undefined;

function useRegistry(): PolicyRegistry {
  registry = PolicyRegistry.create({
    policies: { payments: { attempts: 3, backoff: { type: 'none' } }, single: { attempts: 1 } },
    clock,
  });
  bindRegistry(registry);
  return registry;
}

afterEach(() => {
  if (registry) unbindRegistry(registry);
  registry = undefined;
});

class Flaky {
  calls = 0;
  seen: unknown[] = [];
  signals: (AbortSignal | undefined)[] = [];
  constructor(private readonly failures: number) {}

  @Resilient('payments')
  async charge(amount: number): Promise<string> {
    this.calls++;
    this.seen.push(this);
    if (this.calls <= this.failures) throw new Error(`boom ${this.calls}`);
    return `charged ${amount}`;
  }

  @Resilient('payments')
  sync(): number {
    this.calls++;
    return 7;
  }

  @Resilient('payments')
  async withSignal(id: string, @AttemptSignal() signal?: AbortSignal): Promise<string> {
    this.calls++;
    this.signals.push(signal);
    if (this.calls <= this.failures) throw new Error('boom');
    return id;
  }

  @Resilient('payments')
  stream(): Observable<number> {
    this.calls++;
    this.seen.push(this);
    return this.calls <= this.failures ? throwError(() => new Error('boom')) : of(1, 2, 3);
  }

  @Resilient('payments')
  undeclared() {
    this.calls++;
    return of(1);
  }

  @Resilient('payments', { returns: 'observable' })
  explicit() {
    this.calls++;
    return of(this.calls);
  }

  @Resilient('nope')
  async unknown(): Promise<void> {}
}

describe('@Resilient (Promise mode)', () => {
  it('runs a method failing twice then succeeding exactly 3 times, with `this` the instance each time', async () => {
    useRegistry();
    const flaky = new Flaky(2);
    await expect(flaky.charge(5)).resolves.toBe('charged 5');
    expect(flaky.calls).toBe(3);
    expect(flaky.seen).toEqual([flaky, flaky, flaky]);
  });

  it('rejects with the last error once the attempts are spent', async () => {
    useRegistry();
    const flaky = new Flaky(5);
    await expect(flaky.charge(1)).rejects.toThrow('boom 3');
    expect(flaky.calls).toBe(3);
  });

  it('turns a synchronous method into one returning a Promise', async () => {
    useRegistry();
    const flaky = new Flaky(0);
    const result = flaky.sync() as unknown;
    expect(result).toBeInstanceOf(Promise);
    await expect(result).resolves.toBe(7);
  });

  it('passes each attempt its own signal at the @AttemptSignal() position', async () => {
    useRegistry();
    const flaky = new Flaky(1);
    await expect(flaky.withSignal('a')).resolves.toBe('a');
    expect(flaky.signals).toHaveLength(2);
    expect(flaky.signals[0]).toBeInstanceOf(AbortSignal);
    expect(flaky.signals[1]).toBeInstanceOf(AbortSignal);
    expect(flaky.signals[0]).not.toBe(flaky.signals[1]);
  });

  it('uses a signal the caller passed there as the call cancellation signal', async () => {
    useRegistry();
    const flaky = new Flaky(0);
    const caller = new AbortController();
    caller.abort(new Error('caller gave up'));
    await expect(flaky.withSignal('a', caller.signal)).rejects.toThrow('caller gave up');
    expect(flaky.calls).toBe(0);

    const live = new AbortController();
    await expect(flaky.withSignal('b', live.signal)).resolves.toBe('b');
    expect(flaky.signals[0]).not.toBe(live.signal);
    expect(flaky.signals[0]!.aborted).toBe(false);
  });

  it('rejects with a clear TypeError when an undeclared method returns an Observable', async () => {
    useRegistry();
    const flaky = new Flaky(0);
    await expect(flaky.undeclared() as unknown as Promise<unknown>).rejects.toThrow(
      /Flaky\.undeclared returned an Observable.*returns: 'observable'/,
    );
    expect(flaky.calls).toBe(1);
  });

  it('names the policy, the method and the registered names for an unknown policy', async () => {
    useRegistry();
    const error = await new Flaky(0).unknown().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnknownPolicyError);
    expect((error as Error).message).toContain('"nope" (@Resilient on Flaky.unknown)');
    expect((error as Error).message).toContain('"payments", "single"');
  });

  it('explains that ResilienceModule must be initialized when no registry is bound', async () => {
    await expect(new Flaky(0).charge(1)).rejects.toThrow(
      /Flaky\.charge was called, but no ResilienceModule is initialized/,
    );
  });
});

describe('@Resilient (Observable mode)', () => {
  it('invokes nothing before subscribe', () => {
    useRegistry();
    const flaky = new Flaky(0);
    const stream = flaky.stream();
    expect(stream).toBeInstanceOf(Observable);
    expect(flaky.calls).toBe(0);
  });

  it('invokes the method once per attempt: failing twice then succeeding runs exactly 3 times', async () => {
    useRegistry();
    const flaky = new Flaky(2);
    await expect(lastValueFrom(flaky.stream())).resolves.toBe(3);
    expect(flaky.calls).toBe(3);
    expect(flaky.seen).toEqual([flaky, flaky, flaky]);
  });

  it('delivers every value of the successful attempt once, in order', async () => {
    useRegistry();
    const flaky = new Flaky(1);
    const values: number[] = [];
    await new Promise<void>((resolve, reject) =>
      flaky.stream().subscribe({ next: (v) => values.push(v), error: reject, complete: resolve }),
    );
    expect(values).toEqual([1, 2, 3]);
  });

  it('each subscription is a new call', async () => {
    useRegistry();
    const flaky = new Flaky(0);
    const stream = flaky.stream();
    await lastValueFrom(stream);
    await lastValueFrom(stream);
    expect(flaky.calls).toBe(2);
  });

  it('honours { returns: "observable" } without type metadata', async () => {
    useRegistry();
    const flaky = new Flaky(0);
    const stream = flaky.explicit() as unknown as Observable<number>;
    expect(flaky.calls).toBe(0);
    await expect(firstValueFrom(stream)).resolves.toBe(1);
  });

  it('unsubscribing aborts the call: the attempt signal aborts and no retry starts', async () => {
    useRegistry();
    const signals: AbortSignal[] = [];
    let calls = 0;
    class Slow {
      @Resilient('payments')
      watch(@AttemptSignal() signal?: AbortSignal): Observable<string> {
        calls++;
        signals.push(signal!);
        return new Observable<string>(() => undefined); // never emits
      }
    }
    const subscription = new Slow().watch().subscribe();
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toBe(1);
    expect(signals[0]!.aborted).toBe(false);
    subscription.unsubscribe();
    await new Promise((resolve) => setImmediate(resolve));
    expect(signals[0]!.aborted).toBe(true);
    expect(calls).toBe(1);
  });

  it('twenty subscriptions sharing one caller signal put one listener on it and take it off', async () => {
    useRegistry();
    class Watcher {
      @Resilient('payments')
      watch(@AttemptSignal() _signal?: AbortSignal): Observable<string> {
        return new Observable<string>(() => undefined); // never emits
      }
    }
    const caller = new AbortController();
    const subscriptions = Array.from({ length: 20 }, () =>
      new Watcher().watch(caller.signal).subscribe(),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
    for (const subscription of subscriptions) subscription.unsubscribe();
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('errors the subscriber with the final error once attempts are spent', async () => {
    useRegistry();
    const flaky = new Flaky(9);
    await expect(lastValueFrom(flaky.stream())).rejects.toThrow('boom');
    expect(flaky.calls).toBe(3);
  });
});

describe('@Resilient metadata', () => {
  const KEY = 'test:marker';
  const mark =
    (value: string): MethodDecorator =>
    (_target, _key, descriptor) => {
      Reflect.defineMetadata(KEY, value, descriptor.value as object);
    };

  it('copies metadata stored on the original function, in either decorator order, and marks the wrapper', () => {
    class Both {
      @Resilient('payments')
      @mark('below')
      async a(): Promise<void> {}

      @mark('above')
      @Resilient('payments')
      async b(): Promise<void> {}
    }
    for (const [method, expected] of [
      ['a', 'below'],
      ['b', 'above'],
    ] as const) {
      const fn = Both.prototype[method];
      expect(Reflect.getMetadata(KEY, fn)).toBe(expected);
      expect(Reflect.getMetadata(RESILIENT_POLICY_METADATA, fn)).toBe('payments');
      expect(fn.name).toBe(method);
    }
    expect(Reflect.getMetadata('design:paramtypes', Both.prototype, 'a')).toEqual([]);
  });

  it('refuses a second @Resilient on the same method and an empty name', () => {
    expect(() => {
      class Twice {
        @Resilient('a')
        @Resilient('b')
        async m(): Promise<void> {}
      }
      return Twice;
    }).toThrow(/applied twice to Twice\.m/);
    expect(() => Resilient('')).toThrow(TypeError);
  });
});
