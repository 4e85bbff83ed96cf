import { Backoff } from '../backoff/backoff.js';
import { Breaker } from '../breaker/breaker-value.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { PolicyScope } from '../policy/policy-scope.js';
import { Resilience } from '../policy/policy.js';
import type { ExecutablePolicy } from './executable-policy.js';
import { FakeClock } from '../time/fake-clock.js';
import type { AttemptContext } from './attempt-context.js';
import type { CallEvent } from '../events/call-events.js';
import type { CallObserver } from './observer.js';

class TransientError extends Error {
  override name = 'TransientError';
}

/** An observer that writes down every callback, each with the call state it was given. */
class RecordingObserver implements CallObserver<string> {
  readonly log: string[] = [];
  readonly events: CallEvent[] = [];
  private calls = 0;

  constructor(private readonly tag = '') {}

  callStarted(policy: ExecutablePolicy): string {
    const state = `${this.tag}call${++this.calls}`;
    this.log.push(`callStarted ${policy.name} -> ${state}`);
    return state;
  }

  runAttempt<T>(
    state: string,
    work: (context: AttemptContext) => T | PromiseLike<T>,
    context: AttemptContext,
  ): T | PromiseLike<T> {
    this.log.push(`runAttempt #${context.attempt} ${state}`);
    return work(context);
  }

  event(event: CallEvent, state: string | undefined): void {
    this.events.push(event);
    this.log.push(`event ${event.kind} #${event.attempt} ${state ?? '-'}`);
  }

  callEnded(state: string, terminal: CallEvent): void {
    this.log.push(`callEnded ${terminal.kind} ${state}`);
  }
}

const transientThenOk = ({ attempt }: AttemptContext) => {
  if (attempt === 1) throw new TransientError('blip');
  return 'ok';
};

describe('the telemetry seam: one observer per policy', () => {
  it('call start → attempt → retrying → attempt → succeeded → call end, each with the call state', async () => {
    const observer = new RecordingObserver();
    const policy = Resilience.default.with({ name: 'p', backoff: Backoff.none, onEvent: observer });
    await expect(policy.run(transientThenOk)).resolves.toBe('ok');
    expect(observer.log).toEqual([
      'callStarted p -> call1',
      'runAttempt #1 call1',
      'event attempt #1 call1',
      'event retrying #1 call1',
      'runAttempt #2 call1',
      'event attempt #2 call1',
      'event succeeded #2 call1',
      'callEnded succeeded call1',
    ]);
  });

  it('the same order on every fast path: a timed first attempt, a bounded one, one with a caller signal', async () => {
    const clock = new FakeClock();
    const variants = [
      Resilience.default.with({ name: 'timed', clock }),
      Resilience.default.with({ name: 'bounded', clock, deadline: 1000 }),
      Resilience.default.with({ name: 'breaker', clock, breaker: Breaker.default }),
    ];
    for (const base of variants) {
      const observer = new RecordingObserver();
      const policy = base.withListener(observer);
      await policy.run(() => 1);
      await policy.run(() => 2, { signal: new AbortController().signal });
      expect(observer.log).toEqual([
        `callStarted ${base.name} -> call1`,
        'runAttempt #1 call1',
        'event attempt #1 call1',
        'event succeeded #1 call1',
        'callEnded succeeded call1',
        `callStarted ${base.name} -> call2`,
        'runAttempt #1 call2',
        'event attempt #1 call2',
        'event succeeded #1 call2',
        'callEnded succeeded call2',
      ]);
    }
  });

  it('a budget refusal and a caller abort before the first attempt each end the call once', async () => {
    const clock = new FakeClock();
    const observer = new RecordingObserver();
    // Ten tokens and no refill: the eleventh call's retry is refused.
    const policy = Resilience.default.with({
      name: 'r',
      clock,
      attempts: 2,
      backoff: Backoff.none,
      budget: RetryBudget.of({ fraction: 0, minimumPerSecond: 0 }),
      onEvent: observer,
    });
    for (let i = 0; i < 11; i++) {
      const call = policy.tryRun(() => Promise.reject(new TransientError('down')));
      await clock.runAll();
      await call;
    }
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await expect(policy.run(() => 1, { signal: controller.signal })).rejects.toThrow('gone');
    expect(observer.log.slice(observer.log.indexOf('callStarted r -> call11'))).toEqual([
      'callStarted r -> call11',
      'runAttempt #1 call11',
      'event attempt #1 call11',
      'event rejected #1 call11',
      'callEnded rejected call11',
      'callStarted r -> call12',
      'event failed #0 call12',
      'callEnded failed call12',
    ]);
    expect(observer.log.filter((line) => line.startsWith('callStarted'))).toHaveLength(12);
    expect(observer.log.filter((line) => line.startsWith('callEnded'))).toHaveLength(12);
  });

  it('breaker transitions: one event per transition, with the policy, the break served, what it opened on and no call state', async () => {
    const clock = new FakeClock();
    const observer = new RecordingObserver();
    const policy = Resilience.default
      .with({
        name: 'inventory',
        clock,
        attempts: 1,
        budget: RetryBudget.none,
        breaker: Breaker.with({
          consecutiveFailures: 2,
          failureRateFloor: 0,
          jitter: 'none',
          breakDuration: 5000,
        }),
      })
      .withListener(observer);
    for (let i = 0; i < 3; i++) {
      const call = policy.tryRun(() => Promise.reject(new TransientError('down')));
      await clock.runAll();
      await call;
      await clock.advance(250);
    }
    const transitions = observer.events.filter((e) => e.kind.startsWith('breaker'));
    // Opened on a run of 2 Transient attempts 250 ms apart, the last a TransientError.
    expect(transitions).toEqual([
      expect.objectContaining({
        kind: 'breakerOpened',
        policy: 'inventory',
        attempt: 2,
        duration: 250,
        verdict: 'Transient',
        error: 'TransientError',
        delay: 5000,
        isTerminal: false,
        dependency: undefined,
      }),
    ]);
    expect(observer.log.filter((line) => line.startsWith('event breaker'))).toEqual([
      'event breakerOpened #2 -',
    ]);
    // The third call was refused by the open breaker: no second opening.
    expect(observer.log.filter((line) => line.startsWith('callEnded'))).toEqual([
      'callEnded failed call1',
      'callEnded failed call2',
      'callEnded rejected call3',
    ]);
  });

  it('a keyed instance carries its label on every event, breaker transitions included', async () => {
    const clock = new FakeClock();
    const observer = new RecordingObserver();
    const template = Resilience.default
      .with({
        name: 'api',
        clock,
        attempts: 1,
        budget: RetryBudget.none,
        breaker: Breaker.with({
          consecutiveFailures: 1,
          failureRateFloor: 0,
          jitter: 'none',
          breakDuration: 1000,
        }),
      })
      .withListener(observer);
    const scope = new PolicyScope<string>(template, { label: (host) => ({ host }) });
    await scope.for('a.example').tryRun(() => Promise.reject(new TransientError('down')));
    await scope.for('b.example').run(() => 1);
    expect(observer.events.map((e) => [e.kind, e.dependency])).toEqual([
      ['attempt', { host: 'a.example' }],
      ['breakerOpened', { host: 'a.example' }],
      ['failed', { host: 'a.example' }],
      ['attempt', { host: 'b.example' }],
      ['succeeded', { host: 'b.example' }],
    ]);
    expect(scope.for('a.example').dependency).toEqual({ host: 'a.example' });
    expect(Object.isFrozen(scope.for('a.example').dependency)).toBe(true);
    expect(() => new PolicyScope(template, { label: 'host' as never })).toThrow(
      'label: "host" is invalid: must be a function (key) => { host?, service? }',
    );
  });

  it('withListener composes observers: each keeps its own call state and runs its attempts nested', async () => {
    const first = new RecordingObserver('a');
    const second = new RecordingObserver('b');
    const plain: string[] = [];
    const policy = Resilience.default
      .with({ name: 'c', backoff: Backoff.none })
      .withListener(first)
      .withListener((e) => plain.push(e.kind))
      .withListener(second);
    await policy.run(() => 1);
    expect(first.log).toEqual([
      'callStarted c -> acall1',
      'runAttempt #1 acall1',
      'event attempt #1 acall1',
      'event succeeded #1 acall1',
      'callEnded succeeded acall1',
    ]);
    expect(second.log).toEqual([
      'callStarted c -> bcall1',
      'runAttempt #1 bcall1',
      'event attempt #1 bcall1',
      'event succeeded #1 bcall1',
      'callEnded succeeded bcall1',
    ]);
    expect(plain).toEqual(['attempt', 'succeeded']);
  });

  it('an observer that throws everywhere never changes the outcome; the others still hear everything', async () => {
    const broken: CallObserver = {
      callStarted: () => {
        throw new Error('start bug');
      },
      event: () => {
        throw new Error('event bug');
      },
      callEnded: () => {
        throw new Error('end bug');
      },
    };
    const after = new RecordingObserver();
    const policy = Resilience.default
      .with({ name: 'x', backoff: Backoff.none })
      .withListener(broken)
      .withListener(after);
    await expect(policy.run(transientThenOk)).resolves.toBe('ok');
    expect(after.log.at(-1)).toBe('callEnded succeeded call1');
    expect(after.log).toHaveLength(8);
  });

  it('onEvent accepts a function or an observer and nothing else, naming the field', () => {
    expect(() => Resilience.default.with({ onEvent: {} as never })).toThrow(
      'onEvent: {} is invalid: must be a function (event) => void or a CallObserver',
    );
    expect(() => Resilience.default.with({ onEvent: { event: 3 } as never })).toThrow('onEvent:');
    expect(() => Resilience.default.withListener(3 as never)).toThrow('onEvent: 3 is invalid');
    expect(() =>
      (Resilience.default.with as (o: object) => unknown)({ around: () => undefined }),
    ).toThrow('around');
  });
});
