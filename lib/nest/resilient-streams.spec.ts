import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Observable } from 'rxjs';
import { FakeClock, ProtectedStream } from '../core/index.js';
import { AttemptSignal } from './attempt-signal.decorator.js';
import { PolicyRegistry } from './policy-registry.js';
import { bindRegistry, unbindRegistry } from './resilient-binding.js';
import { Resilient } from './resilient.decorator.js';

const clock = new FakeClock();
let registry: PolicyRegistry | undefined;

function useRegistry(): PolicyRegistry {
  registry = PolicyRegistry.create({
    policies: { feed: { attempts: 3, backoff: { type: 'none' }, attemptTimeout: 100 } },
    clock,
  });
  bindRegistry(registry);
  return registry;
}

afterEach(() => {
  if (registry) unbindRegistry(registry);
  registry = undefined;
});

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve(), { once: true }),
  );
}

class Feed {
  opened = 0;
  closed = 0;
  signals: AbortSignal[] = [];

  /** Fails before its first element on the first call, then yields 1, 2, 3 (or goes silent after 1 when asked). */
  @Resilient('feed')
  async *events(
    silentAfterFirst: boolean,
    @AttemptSignal() signal?: AbortSignal,
  ): AsyncGenerator<number> {
    this.opened++;
    this.signals.push(signal!);
    try {
      if (this.opened === 1) throw new Error('not yet');
      yield 1;
      if (silentAfterFirst) await untilAborted(signal!);
      yield 2;
      yield 3;
    } finally {
      this.closed++;
    }
  }

  /** Returns an async generator without being one: in the Promise mode it resolves to a protected stream. */
  @Resilient('feed')
  plain(): Promise<AsyncIterable<string>> {
    this.opened++;
    return Promise.resolve(
      (async function* () {
        yield 'a';
        yield 'b';
      })(),
    );
  }

  /** Emits 1, then nothing. */
  @Resilient('feed')
  ticks(): Observable<number> {
    this.opened++;
    return new Observable<number>((subscriber) => {
      subscriber.next(1);
      return () => this.closed++;
    });
  }
}

describe('@Resilient on a method returning a stream', () => {
  it('an async * method stays an AsyncIterable: lazy, retried until its first element, each element once', async () => {
    useRegistry();
    const feed = new Feed();
    const stream = feed.events(false);
    expect(typeof stream[Symbol.asyncIterator]).toBe('function');
    expect(feed.opened).toBe(0);
    const items: number[] = [];
    for await (const item of stream) items.push(item);
    expect(items).toEqual([1, 2, 3]);
    expect(feed.opened).toBe(2);
    expect(feed.closed).toBe(2);
  });

  it('break ends the method’s generator (its finally runs) and aborts its attempt signal', async () => {
    useRegistry();
    const feed = new Feed();
    for await (const item of feed.events(false)) {
      expect(item).toBe(1);
      break;
    }
    expect(feed.closed).toBe(2);
    expect(feed.signals[1]!.aborted).toBe(true);
  });

  it('a silence while the consumer waits fails with AttemptStalledError after attemptTimeout', async () => {
    useRegistry();
    const feed = new Feed();
    const iterator = feed.events(true)[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: 1 });
    const pending = iterator.next();
    const stalled = expect(pending).rejects.toMatchObject({
      name: 'AttemptStalledError',
      received: 1,
      unit: 'items',
    });
    await clock.advance(100);
    await stalled;
    expect(feed.signals[1]!.aborted).toBe(true);
  });

  it('the Promise mode resolves to a protected stream', async () => {
    useRegistry();
    const feed = new Feed();
    const stream = await feed.plain();
    expect(stream).toBeInstanceOf(ProtectedStream);
    const items: string[] = [];
    for await (const item of stream) items.push(item);
    expect(items).toEqual(['a', 'b']);
  });

  it('the Observable mode bounds a silence between values by attemptTimeout and unsubscribes the source', async () => {
    useRegistry();
    const feed = new Feed();
    const values: number[] = [];
    const failed = new Promise<unknown>((resolve) =>
      feed.ticks().subscribe({ next: (v) => values.push(v), error: resolve }),
    );
    await clock.advance(99);
    expect(values).toEqual([1]);
    await clock.advance(1);
    expect(await failed).toMatchObject({ name: 'AttemptStalledError', received: 1 });
    expect(feed.closed).toBe(1);
    expect(feed.opened).toBe(1);
  });
});
