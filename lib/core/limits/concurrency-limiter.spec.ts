import fc from 'fast-check';
import { PolicyConfigError } from '../errors.js';
import { FakeClock } from '../time/fake-clock.js';
import { ConcurrencyLimiter, SlotOutcome } from './concurrency-limiter.js';
import { QueueExit } from './limit-queue.js';
import { Limit } from './limit-value.js';
import { adaptiveSettings, concurrencySettings } from './limit-settings.js';

const fixed = (limit: number, queue = 0) => concurrencySettings(limit, { queue }, 'limit');

describe('ConcurrencyLimiter (bulkhead)', () => {
  it('admits up to the limit, then queues FIFO up to the queue, then says no', async () => {
    const clock = new FakeClock();
    const limiter = new ConcurrencyLimiter(fixed(2, 2), clock);
    expect(limiter.tryAcquire()).toBe(true);
    expect(limiter.tryAcquire()).toBe(true);
    expect(limiter.tryAcquire()).toBe(false);
    expect(limiter.canWait).toBe(true);
    const order: string[] = [];
    const a = limiter.wait(Infinity, undefined).then((exit) => order.push(`a:${exit}`));
    const b = limiter.wait(Infinity, undefined).then((exit) => order.push(`b:${exit}`));
    expect(limiter.queued).toBe(2);
    expect(limiter.canWait).toBe(false);
    limiter.release(10, SlotOutcome.Answered);
    await a;
    expect(order).toEqual([`a:${QueueExit.Granted}`]);
    expect(limiter.inflight).toBe(2);
    // A newcomer never overtakes the queue, even with a slot free.
    limiter.release(10, SlotOutcome.Answered);
    await b;
    expect(order).toEqual([`a:${QueueExit.Granted}`, `b:${QueueExit.Granted}`]);
    limiter.release(10, SlotOutcome.Answered);
    limiter.release(10, SlotOutcome.Answered);
    expect(limiter.snapshot()).toEqual({
      kind: 'concurrency',
      limit: 2,
      inflight: 0,
      queued: 0,
      queue: 2,
      noLoadLatency: undefined,
    });
  });

  it('a queued caller whose signal aborts leaves at once with the reason, keeping nobody else waiting', async () => {
    const clock = new FakeClock();
    const limiter = new ConcurrencyLimiter(fixed(1, 5), clock);
    limiter.tryAcquire();
    const controller = new AbortController();
    const aborted = limiter.wait(Infinity, controller.signal);
    const next = limiter.wait(Infinity, undefined);
    const reason = new Error('caller gave up');
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    expect(limiter.queued).toBe(1);
    limiter.release(5, SlotOutcome.Answered);
    await expect(next).resolves.toBe(QueueExit.Granted);
    expect(limiter.inflight).toBe(1);
  });

  it('a queued caller leaves when its deadline passes, and its timer and listener are gone', async () => {
    const clock = new FakeClock();
    const limiter = new ConcurrencyLimiter(fixed(1, 5), clock);
    limiter.tryAcquire();
    const controller = new AbortController();
    const waited = limiter.wait(250, controller.signal);
    expect(clock.pending).toBe(1);
    await clock.advance(249);
    expect(limiter.queued).toBe(1);
    await clock.advance(1);
    await expect(waited).resolves.toBe(QueueExit.Expired);
    expect(limiter.queued).toBe(0);
    expect(clock.pending).toBe(0);
    // The abort listener was removed: aborting now reaches nobody.
    controller.abort();
    expect(limiter.inflight).toBe(1);
  });

  it('a granted caller has its deadline timer cleared', async () => {
    const clock = new FakeClock();
    const limiter = new ConcurrencyLimiter(fixed(1, 1), clock);
    limiter.tryAcquire();
    const waited = limiter.wait(1000, undefined);
    limiter.release(1, SlotOutcome.Answered);
    await expect(waited).resolves.toBe(QueueExit.Granted);
    expect(clock.pending).toBe(0);
  });

  it('a smaller limit admits nobody new until in-flight falls under it; a larger one starts queued callers at once', async () => {
    const clock = new FakeClock();
    const limiter = new ConcurrencyLimiter(fixed(3, 10), clock);
    for (let i = 0; i < 3; i++) limiter.tryAcquire();
    limiter.reconfigure(fixed(1, 10));
    expect(limiter.inflight).toBe(3);
    const waiting = [
      limiter.wait(Infinity, undefined),
      limiter.wait(Infinity, undefined),
      limiter.wait(Infinity, undefined),
    ];
    limiter.release(1, SlotOutcome.Answered);
    limiter.release(1, SlotOutcome.Answered);
    expect(limiter.inflight).toBe(1);
    expect(limiter.queued).toBe(3);
    limiter.reconfigure(fixed(4, 10));
    expect(limiter.inflight).toBe(4);
    expect(limiter.queued).toBe(0);
    await expect(Promise.all(waiting)).resolves.toEqual([
      QueueExit.Granted,
      QueueExit.Granted,
      QueueExit.Granted,
    ]);
  });

  it('a smaller queue keeps the callers already waiting and turns newcomers away', () => {
    const limiter = new ConcurrencyLimiter(fixed(1, 3), new FakeClock());
    limiter.tryAcquire();
    void limiter.wait(Infinity, undefined);
    void limiter.wait(Infinity, undefined);
    limiter.reconfigure(fixed(1, 1));
    expect(limiter.queued).toBe(2);
    expect(limiter.canWait).toBe(false);
  });

  it('hints the median slot hold time for a refusal, nothing before any slot came back', () => {
    const limiter = new ConcurrencyLimiter(fixed(1), new FakeClock());
    expect(limiter.refusalRetryAfter()).toBeUndefined();
    for (const ms of [40, 10, 30]) {
      limiter.tryAcquire();
      limiter.release(ms, SlotOutcome.Answered);
    }
    expect(limiter.refusalRetryAfter()).toBe(30);
  });

  it('no slot ever leaks: random acquisitions, waits, aborts, deadlines, outcomes and resizes end at 0 in flight, an empty queue, every promise settled', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 4 }),
        fc.array(
          fc.oneof(
            fc.record({
              op: fc.constant('call' as const),
              hold: fc.integer({ min: 0, max: 50 }),
              deadline: fc.option(fc.integer({ min: 0, max: 80 })),
              abortAt: fc.option(fc.integer({ min: 0, max: 60 })),
              outcome: fc.constantFrom(0, 1, 2),
            }),
            fc.record({
              op: fc.constant('resize' as const),
              limit: fc.integer({ min: 1, max: 5 }),
              queue: fc.integer({ min: 0, max: 5 }),
            }),
            fc.record({ op: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 30 }) }),
          ),
          { maxLength: 40 },
        ),
        fc.boolean(),
        async (limit, queue, ops, adaptive) => {
          const clock = new FakeClock();
          const limiter = new ConcurrencyLimiter(
            adaptive
              ? adaptiveSettings({ initial: limit, maximum: 8, queue }, 'limit')
              : fixed(limit, queue),
            clock,
          );
          const calls: Promise<string>[] = [];
          const call = async (
            hold: number,
            deadline: number | null,
            abortAt: number | null,
            outcome: SlotOutcome,
          ): Promise<string> => {
            const controller = new AbortController();
            if (abortAt !== null)
              clock.setTimer(abortAt, () => controller.abort(new Error('abort')));
            if (!limiter.tryAcquire()) {
              if (!limiter.canWait) return 'refused';
              let exit: QueueExit;
              try {
                exit = await limiter.wait(
                  deadline === null ? Infinity : clock.now() + deadline,
                  controller.signal,
                );
              } catch {
                return 'aborted';
              }
              if (exit === QueueExit.Expired) return 'expired';
            }
            // The slot is held: every outcome gives it back.
            const start = clock.now();
            try {
              await new Promise<void>((resolve, reject) => {
                const timer = clock.setTimer(hold, resolve);
                if (controller.signal.aborted) {
                  clock.clearTimer(timer);
                  reject(new Error('aborted'));
                } else
                  controller.signal.addEventListener(
                    'abort',
                    () => (clock.clearTimer(timer), reject(new Error('aborted'))),
                    { once: true },
                  );
              });
              return 'done';
            } catch {
              return 'cut';
            } finally {
              limiter.release(clock.now() - start, outcome as SlotOutcome);
            }
          };
          for (const op of ops) {
            if (op.op === 'call')
              calls.push(call(op.hold, op.deadline, op.abortAt, op.outcome as SlotOutcome));
            else if (op.op === 'resize')
              limiter.reconfigure(
                adaptive
                  ? adaptiveSettings({ initial: op.limit, maximum: 8, queue: op.queue }, 'limit')
                  : fixed(op.limit, op.queue),
              );
            else await clock.advance(op.ms);
            expect(limiter.inflight).toBeLessThanOrEqual(Math.max(limiter.limit, 8));
          }
          // Whatever remains queued with no deadline is woken by the slots coming back.
          await clock.runAll();
          const outcomes = await Promise.all(calls);
          expect(outcomes).toHaveLength(calls.length);
          expect(limiter.inflight).toBe(0);
          expect(limiter.queued).toBe(0);
          expect(clock.pending).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('Limit', () => {
  it('validates with the field, the value and the rule', () => {
    expect(() => Limit.concurrency(0)).toThrow(
      new PolicyConfigError(
        'limit.concurrency',
        0,
        'must be an integer in [1, 100000] (calls in flight at once)',
      ),
    );
    expect(() => Limit.concurrency(2.5)).toThrow(PolicyConfigError);
    expect(() => Limit.concurrency(5, { queue: -1 })).toThrow(
      new PolicyConfigError('limit.queue', -1, 'must be an integer >= 0 (or Infinity)'),
    );
    expect(() => Limit.concurrency(5, { queue: 1, size: 3 } as never)).toThrow(
      'limit.size: 3 is invalid: is not a known concurrency limit option (queue)',
    );
    expect(() => Limit.adaptive({ minimum: 10, maximum: 5 })).toThrow(
      new PolicyConfigError('limit.minimum', 10, 'must be <= maximum (5)'),
    );
    expect(() => Limit.adaptive({ initial: 500, maximum: 200 })).toThrow(
      new PolicyConfigError('limit.initial', 500, 'must be in [minimum, maximum] ([1, 200])'),
    );
    expect(Limit.adaptive().settings).toEqual({
      kind: 'adaptive',
      initial: 20,
      minimum: 1,
      maximum: 200,
      queue: 0,
    });
    expect(Limit.adaptive({ maximum: 10 }).settings).toEqual({
      kind: 'adaptive',
      initial: 10,
      minimum: 1,
      maximum: 10,
      queue: 0,
    });
  });

  it('reads the config form', () => {
    expect(Limit.settingsFrom({ concurrency: 20, queue: 50 }, 'policies.p.limit')).toEqual({
      kind: 'concurrency',
      limit: 20,
      queue: 50,
    });
    expect(Limit.settingsFrom({ adaptive: { initial: 20, maximum: 200 } })).toEqual({
      kind: 'adaptive',
      initial: 20,
      minimum: 1,
      maximum: 200,
      queue: 0,
    });
    expect(Limit.settingsFrom({ adaptive: true, queue: 5 })).toEqual({
      kind: 'adaptive',
      initial: 20,
      minimum: 1,
      maximum: 200,
      queue: 5,
    });
    expect(Limit.settingsFrom(false)).toBeUndefined();
    expect(() => Limit.settingsFrom({ concurrency: 0 }, 'policies.p.limit')).toThrow(
      new PolicyConfigError(
        'policies.p.limit.concurrency',
        0,
        'must be an integer in [1, 100000] (calls in flight at once)',
      ),
    );
    expect(() =>
      Limit.settingsFrom({ concurrency: 2, adaptive: true }, 'policies.p.limit'),
    ).toThrow(/exactly one of concurrency, adaptive/);
    expect(() => Limit.settingsFrom({ conccurency: 2 }, 'policies.p.limit')).toThrow(
      'policies.p.limit.conccurency: 2 is invalid: is not a known limit setting (concurrency, adaptive, queue, rate)',
    );
    expect(() => Limit.settingsFrom({ adaptive: { minimum: 0 } }, 'policies.p.limit')).toThrow(
      new PolicyConfigError(
        'policies.p.limit.adaptive.minimum',
        0,
        'must be an integer in [1, 100000] (the lowest limit)',
      ),
    );
    expect(() => Limit.settingsFrom({ adaptive: { inital: 5 } }, 'policies.p.limit')).toThrow(
      /^policies\.p\.limit\.adaptive\.inital: 5 is invalid: is not a known adaptive limit option/,
    );
    expect(() =>
      Limit.settingsFrom({ adaptive: { maximum: 10 }, queue: -1 }, 'policies.p.limit'),
    ).toThrow(/^policies\.p\.limit\.queue: -1 is invalid/);
    expect(Limit.settingsFrom({ adaptive: { maximum: 10 }, queue: 4 }, 'policies.p.limit')).toEqual(
      { kind: 'adaptive', initial: 10, minimum: 1, maximum: 10, queue: 4 },
    );
    expect(() => Limit.settingsFrom(20, 'policies.p.limit')).toThrow(
      /policies\.p\.limit: 20 is invalid: must be \{ concurrency, queue\? \}/,
    );
  });

  it('resolves one limiter per owner; using() always the pinned one', () => {
    const clock = new FakeClock();
    const limit = Limit.concurrency(3);
    const a = {};
    const b = {};
    expect(limit.resolve(a, clock)).toBe(limit.resolve(a, clock));
    expect(limit.resolve(a, clock)).not.toBe(limit.resolve(b, clock));
    const pinned = new ConcurrencyLimiter(fixed(2), clock);
    expect(Limit.using(pinned).resolve(a, clock)).toBe(pinned);
  });
});
