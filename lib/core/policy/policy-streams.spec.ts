import { Readable } from 'node:stream';
import { Observable } from 'rxjs';
import { Backoff } from '../backoff/backoff.js';
import { Hedge } from '../hedging/hedge-value.js';
import { RetryBudget } from '../budget/retry-budget.js';
import {
  AttemptStalledError,
  AttemptTimeoutError,
  DeadlineExceededError,
  PolicyConfigError,
} from '../errors.js';
import type { AttemptContext } from '../execution/attempt-context.js';
import type { CallEvent } from '../events/call-events.js';
import { Resilience } from './policy.js';
import { FakeClock } from '../time/fake-clock.js';
import { CheckpointedStream } from './checkpointed-stream.js';
import { ProtectedStream } from '../streams/protected-stream.js';
import { checkStreamable } from '../streams/stream-head.js';

class Broken extends Error {
  override name = 'Broken';
}

/** Resolves when `signal` aborts (a source that stays silent until it is torn down). */
function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve(), { once: true }),
  );
}

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

function setup(extra: Parameters<typeof Resilience.default.with>[0] = {}) {
  const clock = new FakeClock();
  const events: CallEvent[] = [];
  const policy = Resilience.default.with({
    name: 's',
    clock,
    backoff: Backoff.none,
    budget: RetryBudget.none,
    onEvent: (e) => events.push(e),
    ...extra,
  });
  return {
    clock,
    events,
    policy,
    kinds: () =>
      events.map(
        (e) =>
          `${e.kind}${e.attempt > 0 ? ` #${e.attempt}` : ''}${e.verdict ? ` ${e.verdict}` : ''}`,
      ),
  };
}

describe('a stream under policy.run: the attempt is the time to the first element', () => {
  it('resolves at the first element with a ProtectedStream that delivers every element once, in order', async () => {
    const { policy, kinds } = setup();
    async function* numbers() {
      yield 1;
      yield 2;
      yield 3;
    }
    const stream = await policy.run(() => numbers());
    expect(stream).toBeInstanceOf(ProtectedStream);
    expect(await collect(stream)).toEqual([1, 2, 3]);
    expect(stream.received).toBe(3);
    expect(kinds()).toEqual(['attempt #1 Ok', 'succeeded #1 Ok']);
  });

  it('a failure before the first element is retried; a failure after it reaches the consumer and nothing restarts', async () => {
    const { policy, kinds } = setup();
    let opened = 0;
    async function* flaky() {
      opened++;
      if (opened === 1) throw new Broken('before the first element');
      yield 'a';
      yield 'b';
      throw new Broken('after two elements');
    }
    const stream = await policy.run(() => flaky());
    const items: string[] = [];
    await expect(
      (async () => {
        for await (const item of stream) items.push(item);
      })(),
    ).rejects.toThrow('after two elements');
    expect(items).toEqual(['a', 'b']);
    expect(opened).toBe(2);
    expect(kinds()).toEqual([
      'attempt #1 Transient',
      'retrying #1 Transient',
      'attempt #2 Ok',
      'succeeded #2 Ok',
    ]);
  });

  it('a source silent before its first element is torn down at attemptTimeout (return() runs, signal aborted) and retried', async () => {
    const { clock, policy, kinds } = setup({ attemptTimeout: 100 });
    const signals: AbortSignal[] = [];
    const finallies: number[] = [];
    async function* source(ctx: AttemptContext) {
      signals.push(ctx.signal);
      try {
        if (ctx.attempt === 1) await untilAborted(ctx.signal);
        yield `from attempt ${ctx.attempt}`;
      } finally {
        finallies.push(ctx.attempt);
      }
    }
    const running = policy.run((ctx) => source(ctx));
    await clock.advance(99);
    expect(signals[0]!.aborted).toBe(false);
    await clock.advance(1);
    expect(signals[0]!.aborted).toBe(true);
    expect(signals[0]!.reason).toBeInstanceOf(AttemptTimeoutError);
    const stream = await running;
    expect(finallies).toEqual([1]);
    expect(await collect(stream)).toEqual(['from attempt 2']);
    expect(finallies).toEqual([1, 2]);
    expect(kinds()).toEqual([
      'attempt #1 Transient',
      'retrying #1 Transient',
      'attempt #2 Ok',
      'succeeded #2 Ok',
    ]);
  });

  it('the deadline bounds the time to the first element, not the stream', async () => {
    const { clock, policy } = setup({ deadline: 500, attempts: 1 });
    const silent = policy.run(async function* (ctx: AttemptContext) {
      await untilAborted(ctx.signal);
      yield 0;
    });
    const failed = expect(silent).rejects.toBeInstanceOf(DeadlineExceededError);
    await clock.advance(500);
    await failed;

    // A healthy stream outlives the deadline: 10 elements, one per 100 ms, over 1000 ms.
    const long = await policy.run(async function* () {
      for (let i = 0; i < 10; i++) {
        yield i;
        await new Promise<void>((resolve) => clock.setTimer(100, resolve));
      }
    });
    const items: number[] = [];
    const reading = (async () => {
      for await (const item of long) items.push(item);
    })();
    await clock.advance(1000);
    await reading;
    expect(items).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});

describe('gaps between elements: attemptTimeout bounds a pending pull only', () => {
  it('a source silent while the consumer waits fails with AttemptStalledError carrying the count received; the source ends', async () => {
    const { clock, policy } = setup({ attemptTimeout: 100 });
    let signal: AbortSignal | undefined;
    let closed = false;
    const stream = await policy.run(async function* (ctx: AttemptContext) {
      signal = ctx.signal;
      try {
        yield 1;
        yield 2;
        await untilAborted(ctx.signal);
        yield 3;
      } finally {
        closed = true;
      }
    });
    expect(await stream.next()).toEqual({ done: false, value: 1 });
    expect(await stream.next()).toEqual({ done: false, value: 2 });
    const third = stream.next();
    const stalled = expect(third).rejects.toMatchObject({
      name: 'AttemptStalledError',
      gap: 100,
      received: 2,
      unit: 'items',
    });
    await clock.advance(99);
    expect(signal!.aborted).toBe(false);
    await clock.advance(1);
    await stalled;
    expect(signal!.aborted).toBe(true);
    expect(signal!.reason).toBeInstanceOf(AttemptStalledError);
    await clock.advance(0);
    expect(closed).toBe(true);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it('a slow consumer is never timed: 5 s between pulls with attemptTimeout 100 ms', async () => {
    const { clock, policy } = setup({ attemptTimeout: 100 });
    const stream = await policy.run(async function* () {
      yield 'x';
      yield 'y';
      yield 'z';
    });
    const items: string[] = [];
    for (;;) {
      await clock.advance(5000);
      const next = await stream.next();
      if (next.done === true) break;
      items.push(next.value);
    }
    expect(items).toEqual(['x', 'y', 'z']);
    expect(clock.pending).toBe(0);
  });
});

describe('a consumer that stops early ends the source', () => {
  it('break: the generator’s finally runs and the accepted attempt’s signal aborts in the same tick; no restart', async () => {
    const { policy } = setup({ deadline: 60_000 });
    let signal: AbortSignal | undefined;
    let opened = 0;
    let closed = false;
    const stream = await policy.run(async function* (ctx: AttemptContext) {
      opened++;
      signal = ctx.signal;
      try {
        for (let i = 0; ; i++) yield i;
      } finally {
        closed = true;
      }
    });
    const items: number[] = [];
    for await (const item of stream) {
      items.push(item);
      if (item === 2) break;
    }
    expect(signal!.aborted).toBe(true);
    expect((signal!.reason as Error).name).toBe('AbortError');
    await Promise.resolve();
    expect(closed).toBe(true);
    expect(items).toEqual([0, 1, 2]);
    expect(opened).toBe(1);
  });

  it("the caller's signal aborting mid-stream rejects the pending pull with its reason and ends the source", async () => {
    const { policy } = setup();
    const controller = new AbortController();
    let closed = false;
    const stream = await policy.run(
      async function* (ctx: AttemptContext) {
        try {
          yield 1;
          await untilAborted(ctx.signal);
        } finally {
          closed = true;
        }
      },
      { signal: controller.signal },
    );
    expect(await stream.next()).toEqual({ done: false, value: 1 });
    const pending = stream.next();
    controller.abort(new Error('caller left'));
    await expect(pending).rejects.toThrow('caller left');
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(true);
  });

  it('a Node readable stream: elements as chunks, break destroys it', async () => {
    const { policy } = setup();
    const readable = new Readable({ objectMode: true, read() {} });
    readable.push('first');
    readable.push('second');
    const stream = await policy.run(() => readable);
    for await (const chunk of stream) {
      expect(chunk).toBe('first');
      break;
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(readable.destroyed).toBe(true);
  });
});

describe('an Observable source', () => {
  it('an error before the first value is retried, values arrive in order, an error after the first value reaches the consumer', async () => {
    const { policy, kinds } = setup();
    let subscriptions = 0;
    const stream = await policy.run(
      () =>
        new Observable<number>((subscriber) => {
          subscriptions++;
          if (subscriptions === 1) subscriber.error(new Broken('no value yet'));
          else {
            subscriber.next(10);
            subscriber.next(20);
            subscriber.error(new Broken('after two values'));
          }
        }),
    );
    const items: number[] = [];
    await expect(
      (async () => {
        for await (const item of stream) items.push(item);
      })(),
    ).rejects.toThrow('after two values');
    expect(items).toEqual([10, 20]);
    expect(subscriptions).toBe(2);
    expect(kinds()).toEqual([
      'attempt #1 Transient',
      'retrying #1 Transient',
      'attempt #2 Ok',
      'succeeded #2 Ok',
    ]);
  });

  it('break unsubscribes', async () => {
    const { policy } = setup();
    let unsubscribed = 0;
    const stream = await policy.run(
      () =>
        new Observable<number>((subscriber) => {
          subscriber.next(1);
          subscriber.next(2);
          return () => unsubscribed++;
        }),
    );
    for await (const item of stream) {
      expect(item).toBe(1);
      break;
    }
    expect(unsubscribed).toBe(1);
  });
});

describe('checkpointed streams: a mid-stream failure re-opens the source at the last checkpoint', () => {
  /** A feed of 0..9 that breaks after `breakAfter[n]` elements on its n-th opening. */
  function feed(breakAfter: number[]) {
    const opens: number[] = [];
    const source = (from: number) =>
      (async function* () {
        const n = opens.push(from) - 1;
        let sent = 0;
        for (let i = from; i < 10; i++) {
          if (sent === breakAfter[n]) throw new Broken(`connection reset after ${sent}`);
          sent++;
          yield { seq: i };
        }
      })();
    return { opens, source };
  }

  it('delivers each element exactly once, in order, across restarts; reports streamResumed; one terminal event', async () => {
    const { policy, kinds } = setup();
    const { opens, source } = feed([3, 4]);
    const stream = await policy.run({
      start: 0,
      checkpoint: (item: { seq: number }) => item.seq + 1,
      source,
    });
    expect(stream).toBeInstanceOf(CheckpointedStream);
    const items = (await collect(stream)).map((item) => item.seq);
    expect(items).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(opens).toEqual([0, 3, 7]);
    expect(stream.restarts).toBe(2);
    expect(stream.received).toBe(10);
    expect(kinds()).toEqual([
      'attempt #1 Ok',
      'retrying #1 Transient',
      'attempt #2 Ok',
      'streamResumed #2 Ok',
      'retrying #1 Transient',
      'attempt #2 Ok',
      'streamResumed #2 Ok',
      'succeeded #2 Ok',
    ]);
  });

  it('at most `restarts` times: the failure after the last one reaches the consumer', async () => {
    const { policy } = setup({ restarts: 2 });
    const { opens, source } = feed([1, 1, 1, 1, 1]);
    const stream = await policy.run({
      start: 0,
      checkpoint: (item: { seq: number }) => item.seq + 1,
      source,
    });
    const items: number[] = [];
    await expect(
      (async () => {
        for await (const item of stream) items.push(item.seq);
      })(),
    ).rejects.toThrow('connection reset after 1');
    expect(items).toEqual([0, 1, 2]);
    expect(opens).toEqual([0, 1, 2]);
  });

  it('a Permanent failure mid-stream is not restarted', async () => {
    const { policy } = setup();
    let opens = 0;
    const stream = await policy.run({
      start: 0,
      checkpoint: (item: number) => item + 1,
      source: () =>
        (async function* () {
          opens++;
          yield 0;
          throw new TypeError('a bug');
        })(),
    });
    await expect(collect(stream)).rejects.toThrow('a bug');
    expect(opens).toBe(1);
  });

  it('a restart goes through the retry budget: an empty bucket refuses it with CallRejectedError', async () => {
    const { clock, policy } = setup({
      budget: RetryBudget.of({ fraction: 0, minimumPerSecond: 0 }),
    });
    const bucket = policy.bucket()!;
    while (bucket.tryAcquire(false)) {
      /* drain the bucket */
    }
    const { opens, source } = feed([2]);
    const stream = await policy.run({
      start: 0,
      checkpoint: (item: { seq: number }) => item.seq + 1,
      source,
    });
    const reading = collect(stream);
    const refused = expect(reading).rejects.toMatchObject({
      name: 'CallRejectedError',
      reason: 'BudgetExhausted',
    });
    await clock.advance(100);
    await refused;
    expect(opens).toEqual([0]);
  });

  it('bad checkpointed sources and a hedged policy are refused with PolicyConfigError naming the field', async () => {
    const { policy } = setup();
    await expect(
      policy.run({ start: 0, checkpoint: 'next' as never, source: () => Readable.from([]) }),
    ).rejects.toThrow('checkpoint: "next" is invalid');
    await expect(
      policy.run({
        start: 0,
        checkpoint: (n: number) => n,
        source: () => Readable.from([]),
        restarts: -1,
      }),
    ).rejects.toThrow('restarts: -1 is invalid');
    await expect(
      policy.run({ start: 0, checkpoint: (n: number) => n, source: () => 42 as never }),
    ).rejects.toThrow('source: 42 is invalid: must return an AsyncIterable or an Observable');
    expect(() => checkStreamable(policy.options)).not.toThrow();
  });

  it('a hedged policy given a stream rejects with PolicyConfigError (field hedge), and the source is never pulled', async () => {
    const { policy } = setup({ hedge: Hedge.at(0.95), repeatable: true });
    let pulled = 0;
    async function* source() {
      pulled++;
      yield 1;
    }
    const plain = policy.run(() => source());
    await expect(plain).rejects.toBeInstanceOf(PolicyConfigError);
    await expect(policy.run(() => source())).rejects.toThrow(
      /^hedge: .* is invalid: a hedged policy cannot run a stream/,
    );
    await expect(
      policy.run({ start: 0, checkpoint: (n: number) => n + 1, source: () => source() }),
    ).rejects.toThrow(/^hedge: /);
    expect(pulled).toBe(0);
    expect(() => checkStreamable(policy.options)).toThrow(PolicyConfigError);
  });
});
