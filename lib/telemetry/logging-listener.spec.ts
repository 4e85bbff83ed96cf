import {
  Backoff,
  Breaker,
  CallEvent,
  FakeClock,
  type Policy,
  PolicyConfigError,
  Resilience,
  RetryBudget,
} from '../core/index.js';
import {
  describeEvent,
  INCIDENT_WINDOW_MS,
  LoggingListener,
  LogSampling,
  MAXIMUM_REPEAT_WINDOWS,
  REPEAT_WINDOW_MS,
  type ResilienceLogLevel,
  type ResilienceLogger,
  withLogging,
} from './logging-listener.js';

/** A logger that keeps `level message` lines; levels below `minimum` are reported as disabled. */
class RecordingLogger implements ResilienceLogger {
  readonly lines: string[] = [];
  enabledChecks = 0;
  constructor(private readonly disabled: readonly ResilienceLogLevel[] = []) {}
  log(message: string): void {
    this.lines.push(`log ${message}`);
  }
  warn(message: string): void {
    this.lines.push(`warn ${message}`);
  }
  debug(message: string): void {
    this.lines.push(`debug ${message}`);
  }
  verbose(message: string): void {
    this.lines.push(`verbose ${message}`);
  }
  isLevelEnabled(level: ResilienceLogLevel): boolean {
    this.enabledChecks++;
    return !this.disabled.includes(level);
  }
  take(): string[] {
    return this.lines.splice(0);
  }
}

class TransientError extends Error {
  override name = 'TransientError';
}

/** Runs `policy` on the fake clock until the call settles. */
async function settle(
  clock: FakeClock,
  policy: Policy,
  work: Parameters<Policy['tryRun']>[0],
): Promise<void> {
  const call = policy.tryRun(work);
  await clock.runAll();
  await call;
}

/** Waits `ms` on the fake clock (inside a call's work). */
function pause(clock: FakeClock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimer(ms, resolve));
}

/**
 * A one-attempt policy named `name` with a logged breaker (1 s breaks, no jitter, plus `settings`) on
 * a fake clock, its random source 0 (a recovering breaker admits every attempt it may); `errors`
 * collects the `error` of every `breakerOpened` event, `moves` every breaker event's kind and state.
 */
function loggedBreaker(name: string, settings: Parameters<typeof Breaker.with>[0] = {}) {
  const clock = new FakeClock();
  const logger = new RecordingLogger();
  const errors: (string | undefined)[] = [];
  const moves: string[] = [];
  const policy = withLogging(
    Resilience.default.with({
      name,
      clock,
      random: () => 0,
      attempts: 1,
      budget: RetryBudget.none,
      breaker: Breaker.with({ breakDuration: 1000, jitter: 'none', ...settings }),
    }),
    logger,
  ).withListener((event) => {
    if (event.kind === 'breakerOpened') errors.push(event.error);
    if (event.breakerState !== undefined) moves.push(`${event.kind} ${event.breakerState}`);
  });
  return { clock, logger, errors, moves, policy };
}

/** Work that answers after `ms` on the fake clock. */
const answerAfter = (clock: FakeClock, ms: number) => async () => {
  await pause(clock, ms);
  return 'ok';
};

const ok = () => 1;
const down = () => {
  throw new TransientError('down');
};

describe('profiles', () => {
  let clock: FakeClock;
  let logger: RecordingLogger;
  const base = () =>
    Resilience.default.with({
      name: 'payments',
      clock,
      backoff: Backoff.constant(200),
      attempts: 2,
    });
  beforeEach(() => {
    clock = new FakeClock();
    logger = new RecordingLogger();
  });

  it('default: nothing for a healthy call, a retried success or a failed call, whatever the levels (none formatted)', async () => {
    const policy = withLogging(base(), logger);
    await settle(clock, policy, ok);
    let n = 0;
    await settle(clock, policy, async () => {
      await pause(clock, 5);
      if (++n === 1) throw new TransientError('blip');
      return 2;
    });
    await settle(clock, policy, down);
    expect(logger.take()).toEqual([]);
    expect(logger.enabledChecks).toBe(0);
  });

  it('default: incidents still warn', async () => {
    const policy = withLogging(
      base().with({ budget: RetryBudget.of({ fraction: 0, minimumPerSecond: 0 }) }),
      logger,
    );
    for (let i = 0; i < 10; i++) await settle(clock, policy, down); // ten retries empty the bucket (10 tokens)
    expect(logger.take()).toEqual([]);
    await settle(clock, policy, down);
    expect(logger.take()).toEqual([
      'warn [payments] Retry refused after attempt #1 (Transient): the retry budget is spent (retries used up their share of recent calls; the dependency keeps failing); the call ended after 100ms with CallRejectedError',
    ]);
  });

  it('verbose: traffic records raised to log; incidents stay at warn', async () => {
    const policy = withLogging(
      base().with({ budget: RetryBudget.of({ fraction: 0, minimumPerSecond: 0 }) }),
      logger,
      { profile: 'verbose' },
    );
    let n = 0;
    await settle(clock, policy, () => {
      if (++n === 1) throw new TransientError('blip');
      return 2;
    });
    expect(logger.take()).toEqual([
      'log [payments] Attempt #1 Transient (0ms) TransientError',
      'log [payments] Retrying #1 Transient (0ms) +200ms TransientError',
      'log [payments] Attempt #2 Ok (0ms)',
      'log [payments] Succeeded #2 (200ms)',
    ]);
    for (let i = 0; i < 9; i++) await settle(clock, policy, ok); // healthy calls, no tokens spent
    for (let i = 0; i < 9; i++) await settle(clock, policy, down); // 9 more retries: the bucket (10) is empty
    logger.take();
    await settle(clock, policy, down);
    expect(logger.take()).toEqual([
      'log [payments] Attempt #1 Transient (0ms) TransientError',
      'warn [payments] Retry refused after attempt #1 (Transient): the retry budget is spent (retries used up their share of recent calls; the dependency keeps failing); the call ended after 100ms with CallRejectedError',
    ]);
  });

  it('off: withLogging returns the policy itself (no listener, no cost)', () => {
    const policy = base();
    expect(withLogging(policy, logger, { profile: 'off' })).toBe(policy);
  });

  it('withListener keeps logging; with({ onEvent }) replaces it', async () => {
    const seen: string[] = [];
    const policy = withLogging(base(), logger, { profile: 'verbose' }).withListener((e) =>
      seen.push(e.kind),
    );
    await settle(clock, policy, ok);
    expect(logger.take()).toHaveLength(2);
    expect(seen).toEqual(['attempt', 'succeeded']);
    await settle(clock, policy.with({ onEvent: (e) => seen.push(e.kind) }), ok);
    expect(logger.take()).toEqual([]);
  });

  it('a LoggingListener is an observer: withListener(listener) logs as withLogging does', async () => {
    const policy = base().withListener(new LoggingListener(logger, clock, { profile: 'verbose' }));
    await settle(clock, policy, ok);
    expect(logger.take()).toEqual([
      'log [payments] Attempt #1 Ok (0ms)',
      'log [payments] Succeeded #1 (0ms)',
    ]);
  });
});

describe('a breaker opening in words', () => {
  const opened = (init: Partial<ConstructorParameters<typeof CallEvent>[0]>) =>
    describeEvent(CallEvent.of({ kind: 'breakerOpened', policy: 'payments', ...init }));

  it('says the break, what it opened on, where, and the last error', () => {
    expect(
      opened({
        delay: 5730,
        attempt: 21,
        duration: 3100,
        verdict: 'Transient',
        error: 'TypeError',
        dependency: { host: '127.0.0.1:4000' },
      }),
    ).toBe(
      '[payments] Breaker opened for 5.7s after 21 failures in 3.1s (host 127.0.0.1:4000; last: TypeError)',
    );
    expect(
      opened({ delay: 850, attempt: 1, duration: 320, verdict: 'Transient', error: 'Error' }),
    ).toBe('[payments] Breaker opened for 850ms after 1 failure in 320ms (last: Error)');
    expect(
      opened({
        delay: 15_000,
        attempt: 20,
        duration: 30_000,
        verdict: 'Ok',
        dependency: { service: 'shop.Inventory' },
      }),
    ).toBe(
      '[payments] Breaker opened for 15.0s after 20 slow attempts in 30.0s (service shop.Inventory)',
    );
    // Isolated: no break length, no trip.
    expect(opened({})).toBe('[payments] Breaker opened');
  });

  it('a failed half-open probe re-opens: the line says so, not a one-failure trip', async () => {
    const { clock, logger, policy } = loggedBreaker('payments');
    // Five Transient failures from a cold start trip it: the ordinary line, as before.
    for (let i = 0; i < 5; i++) await settle(clock, policy, down);
    await clock.advance(1000);
    // The probe fails after 300 ms.
    await settle(clock, policy, async () => {
      await pause(clock, 300);
      throw new TransientError('still down');
    });
    expect(logger.take()).toEqual([
      'warn [payments] Breaker opened for 1.0s after 5 failures (last: TransientError)',
      'debug [payments] Breaker half-open: probing',
      'debug [payments] Breaker re-opened for 1.0s: the half-open probe failed after 300ms (last: TransientError)',
    ]);
  });

  it('names the last failure as the exception filter does: the socket code on the error or its cause, a gRPC status', async () => {
    const { clock, logger, errors, policy } = loggedBreaker('inventory');
    // What undici's fetch throws for a closed port: the code is on the cause.
    const refused = async () => {
      await pause(clock, 50);
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4000'), {
          code: 'ECONNREFUSED',
        }),
      });
    };
    for (let i = 0; i < 5; i++) await settle(clock, policy, refused);
    expect(logger.take()).toEqual([
      'warn [inventory] Breaker opened for 1.0s after 5 failures in 200ms (last: ECONNREFUSED)',
    ]);
    expect(errors).toEqual(['ECONNREFUSED']);
    // No code anywhere: the error's name.
    await clock.advance(1000);
    await settle(clock, policy, down);
    expect(logger.take()).toEqual([
      'debug [inventory] Breaker half-open: probing',
      'debug [inventory] Breaker re-opened for 1.0s: the half-open probe failed after 0ms (last: TransientError)',
    ]);
    expect(errors).toEqual(['ECONNREFUSED', 'TransientError']);
    // A gRPC status: its name, as the filter's line for the gRPC interceptor says.
    await clock.advance(1000);
    await settle(clock, policy, () => {
      throw Object.assign(new Error('14 UNAVAILABLE: no connection'), { code: 14, details: '' });
    });
    expect(logger.take()).toEqual([
      'debug [inventory] Breaker half-open: probing',
      'debug [inventory] Breaker re-opened for 1.0s: the half-open probe failed after 0ms (last: UNAVAILABLE)',
    ]);
  });

  it('a slow probe after a failures trip names no error: the probe answered', async () => {
    const { clock, logger, errors, policy } = loggedBreaker('payments', {
      consecutiveFailures: 5,
      slowCallMultiple: 3,
    });
    // 20 answers in 100 ms warm the latency baseline once out of the 30 s trip window: slow is above
    // 300 ms. Then 5 failures in a row trip.
    for (let i = 0; i < 20; i++) await settle(clock, policy, answerAfter(clock, 100));
    await clock.advance(40_000);
    for (let i = 0; i < 5; i++) await settle(clock, policy, down);
    await clock.advance(1000);
    await settle(clock, policy, answerAfter(clock, 1000));
    expect(logger.take()).toEqual([
      'warn [payments] Breaker opened for 1.0s after 5 failures (last: TransientError)',
      'debug [payments] Breaker half-open: probing',
      'debug [payments] Breaker re-opened for 1.0s: the half-open probe was slow (1.0s)',
    ]);
    expect(errors).toEqual(['TransientError', undefined]);
  });

  it('a breaker recovering after its probes says what it does, not a second half-open', async () => {
    const { clock, logger, moves, policy } = loggedBreaker('payments', { recovery: true });
    for (let i = 0; i < 5; i++) await settle(clock, policy, down);
    await clock.advance(1000);
    // Two good probes: with recovery on, the breaker starts recovering instead of closing.
    await settle(clock, policy, ok);
    await settle(clock, policy, ok);
    expect(logger.take()).toEqual([
      'warn [payments] Breaker opened for 1.0s after 5 failures (last: TransientError)',
      'debug [payments] Breaker half-open: probing',
      'debug [payments] Breaker recovering: admitting a growing share of attempts (it grows with time and fast answers; a failure re-opens the breaker)',
    ]);
    // The ramp: a quarter of the 1 s break on the clock, and 19 fast answers from 5 % in steps of 5 %.
    await clock.advance(250);
    for (let i = 0; i < 18; i++) await settle(clock, policy, ok);
    expect(logger.take()).toEqual([]);
    await settle(clock, policy, ok);
    expect(logger.take()).toEqual(['log [payments] Breaker closed']);
    expect(moves).toEqual([
      'breakerOpened open',
      'breakerHalfOpened halfOpen',
      'breakerHalfOpened recovering',
      'breakerClosed closed',
    ]);
  });

  it('a slow probe and a failure while recovering re-open too, each in its own words', () => {
    expect(
      opened({ delay: 2000, attempt: 1, duration: 4200, verdict: 'Ok', trip: 'slowProbe' }),
    ).toBe('[payments] Breaker re-opened for 2.0s: the half-open probe was slow (4.2s)');
    expect(
      opened({
        delay: 1000,
        attempt: 1,
        verdict: 'Transient',
        error: 'TypeError',
        trip: 'recovery',
        dependency: { host: 'pay.example' },
      }),
    ).toBe(
      '[payments] Breaker re-opened for 1.0s: an attempt failed while recovering (host pay.example; last: TypeError)',
    );
  });
});

describe('refusals in words', () => {
  const refusal = (init: Partial<ConstructorParameters<typeof CallEvent>[0]>) =>
    describeEvent(
      CallEvent.of({
        kind: 'rejected',
        policy: 'payments',
        error: 'CallRejectedError',
        duration: 40,
        isTerminal: true,
        ...init,
      }),
    );

  it('says what was refused (a retry after attempt N, or the call itself), why, and how the call ended', () => {
    expect(
      refusal({ reason: 'dependencyUnavailable', dependency: { host: 'pay.example:443' } }),
    ).toBe(
      '[payments] Call refused before its first attempt: the circuit breaker is open (the dependency failed too often; probes tell when it is back); the call ended after 40ms with CallRejectedError (host pay.example:443)',
    );
    expect(refusal({ reason: 'limited', attempt: 2, verdict: 'Transient' })).toBe(
      "[payments] Retry refused after attempt #2 (Transient): the policy's limit is full (its concurrency or rate limit); the call ended after 40ms with CallRejectedError",
    );
    // A reason without words keeps the event's own form.
    expect(refusal({ reason: 'cancelled' })).toBe(
      '[payments] Rejected (40ms) cancelled CallRejectedError',
    );
  });

  it("says what the policy's fallback made of a refused call: served with its value, or threw its own error", () => {
    expect(refusal({ reason: 'limited', fallback: 'served' })).toBe(
      "[payments] Call refused before its first attempt: the policy's limit is full (its concurrency or rate limit); the call ended after 40ms with the fallback's value (instead of CallRejectedError)",
    );
    expect(
      refusal({ reason: 'dependencyUnavailable', error: 'CacheMissError', fallback: 'failed' }),
    ).toBe(
      '[payments] Call refused before its first attempt: the circuit breaker is open (the dependency failed too often; probes tell when it is back); the call ended after 40ms with CacheMissError, thrown by the fallback',
    );
    // Other terminal events say it last in their own form.
    expect(
      describeEvent(
        CallEvent.of({
          kind: 'failed',
          policy: 'payments',
          attempt: 3,
          verdict: 'Transient',
          error: 'TimeoutError',
          duration: 310,
          reason: 'attemptsExhausted',
          isTerminal: true,
          fallback: 'served',
        }),
      ),
    ).toBe(
      '[payments] Failed #3 Transient (310ms) attemptsExhausted TimeoutError (fallback served)',
    );
  });
});

describe('flood control', () => {
  it('the first refusal warns; repeats inside 30 s go to debug and are counted; the next warning says how many', async () => {
    const clock = new FakeClock();
    const logger = new RecordingLogger();
    // Ten tokens and no refill: ten retries, then every retry is refused (after the 100 ms guarded pause).
    const policy = withLogging(
      Resilience.default.with({
        name: 'payments',
        clock,
        attempts: 2,
        backoff: Backoff.none,
        budget: RetryBudget.of({ fraction: 0, minimumPerSecond: 0 }),
      }),
      logger,
    );
    for (let i = 0; i < 10; i++) await settle(clock, policy, down);
    logger.take();
    const refusals = () => logger.take().filter((line) => line.includes('refused'));

    await settle(clock, policy, down); // t = 0 → 100: warns, opens the window until 30 100
    expect(clock.now()).toBe(100);
    expect(refusals()).toEqual([
      'warn [payments] Retry refused after attempt #1 (Transient): the retry budget is spent (retries used up their share of recent calls; the dependency keeps failing); the call ended after 100ms with CallRejectedError',
    ]);
    for (let i = 0; i < 5; i++) await settle(clock, policy, down);
    expect(refusals()).toEqual(
      Array(5).fill(
        'debug [payments] Retry refused after attempt #1 (Transient): the retry budget is spent (retries used up their share of recent calls; the dependency keeps failing); the call ended after 100ms with CallRejectedError',
      ),
    );

    await clock.advance(30_000 - clock.now()); // t = 30 000: the refusal logged at 30 100 is outside the window
    await settle(clock, policy, down);
    expect(refusals()).toEqual([
      'warn [payments] Retry refused after attempt #1 (Transient): the retry budget is spent (retries used up their share of recent calls; the dependency keeps failing); the call ended after 100ms with CallRejectedError (5 similar records logged at debug since the previous warning)',
    ]);
    await settle(clock, policy, down);
    expect(refusals()).toEqual([
      'debug [payments] Retry refused after attempt #1 (Transient): the retry budget is spent (retries used up their share of recent calls; the dependency keeps failing); the call ended after 100ms with CallRejectedError',
    ]);
  });

  it('windows are per reason, exactly 30 s, and the count survives a disabled debug level (nothing dropped, only demoted)', async () => {
    const clock = new FakeClock();
    const logger = new RecordingLogger(['debug', 'verbose']);
    const listener = new LoggingListener(logger, clock);
    const budget = new CallEvent({
      kind: 'rejected',
      policy: 'payments',
      attempt: 1,
      verdict: 'Transient',
      error: 'CallRejectedError',
      duration: 100,
      reason: 'budgetExhausted',
      isTerminal: true,
    });
    const open = new CallEvent({
      kind: 'rejected',
      policy: 'payments',
      attempt: 1,
      verdict: 'Transient',
      error: 'CallRejectedError',
      duration: 100,
      reason: 'dependencyUnavailable',
      isTerminal: true,
    });
    listener.record(budget);
    listener.record(open);
    listener.record(budget);
    listener.record(open);
    listener.record(budget);
    await clock.advance(REPEAT_WINDOW_MS - 1 - clock.now());
    listener.record(budget);
    expect(logger.take()).toEqual([
      'warn [payments] Retry refused after attempt #1 (Transient): the retry budget is spent (retries used up their share of recent calls; the dependency keeps failing); the call ended after 100ms with CallRejectedError',
      'warn [payments] Retry refused after attempt #1 (Transient): the circuit breaker is open (the dependency failed too often; probes tell when it is back); the call ended after 100ms with CallRejectedError',
    ]);
    await clock.advance(REPEAT_WINDOW_MS - clock.now());
    listener.record(budget);
    listener.record(open);
    expect(logger.take()).toEqual([
      'warn [payments] Retry refused after attempt #1 (Transient): the retry budget is spent (retries used up their share of recent calls; the dependency keeps failing); the call ended after 100ms with CallRejectedError (3 similar records logged at debug since the previous warning)',
      'warn [payments] Retry refused after attempt #1 (Transient): the circuit breaker is open (the dependency failed too often; probes tell when it is back); the call ended after 100ms with CallRejectedError (1 similar record logged at debug since the previous warning)',
    ]);
  });

  it('every incident kind warns: breaker opened, nested retry, stall, saturation; breaker recovery at log; which guard refused is traffic', () => {
    const clock = new FakeClock();
    const logger = new RecordingLogger();
    const listener = new LoggingListener(logger, clock);
    const event = (
      kind: CallEvent['kind'],
      extra: Partial<{ error: string; delay: number; attempt: number }> = {},
    ) =>
      new CallEvent({
        kind,
        policy: 'payments',
        attempt: extra.attempt,
        error: extra.error,
        delay: extra.delay,
      });
    listener.record(event('breakerOpened', { delay: 15_000 }));
    listener.record(event('nestedRetry'));
    listener.record(event('attempt', { attempt: 1, error: 'AttemptStalledError' }));
    listener.record(event('rejectedByQuota', { attempt: 2 }));
    listener.record(event('saturationDetected'));
    listener.record(event('breakerHalfOpened'));
    listener.record(event('breakerClosed'));
    listener.record(event('breakerOpened', { delay: 30_000 }));
    expect(logger.take()).toEqual([
      'warn [payments] Breaker opened for 15.0s',
      'warn [payments] NestedRetry (0ms)',
      'warn [payments] Attempt #1 (0ms) AttemptStalledError',
      'warn [payments] SaturationDetected (0ms)',
      'debug [payments] Breaker half-open: probing',
      'log [payments] Breaker closed',
      'debug [payments] Breaker opened for 30.0s',
    ]);
  });

  it('a nested retry (a healthy middle hop): one warning per (policy, host) window with the count, nothing at any level in between; verbose keeps debug', async () => {
    const clock = new FakeClock();
    const logger = new RecordingLogger();
    const listener = new LoggingListener(logger, clock);
    const nested = (host: string) =>
      new CallEvent({ kind: 'nestedRetry', policy: 'db', dependency: { host } });
    for (let i = 0; i < 200; i++) listener.record(nested('db.internal'));
    listener.record(nested('replica.internal'));
    expect(logger.take()).toEqual([
      'warn [db] NestedRetry (0ms) (host db.internal)',
      'warn [db] NestedRetry (0ms) (host replica.internal)',
    ]);
    await clock.advance(REPEAT_WINDOW_MS);
    listener.record(nested('db.internal'));
    expect(logger.take()).toEqual([
      'warn [db] NestedRetry (0ms) (host db.internal) (199 similar records not logged since the previous warning)',
    ]);
    const verbose = new LoggingListener(logger, clock, { profile: 'verbose' });
    for (let i = 0; i < 3; i++) verbose.record(nested('db.internal'));
    expect(logger.take()).toEqual([
      'warn [db] NestedRetry (0ms) (host db.internal)',
      'debug [db] NestedRetry (0ms) (host db.internal)',
      'debug [db] NestedRetry (0ms) (host db.internal)',
    ]);
  });

  it('keyed instances: flood control per host, so one flapping host never silences another; the record names the host', async () => {
    const clock = new FakeClock();
    const logger = new RecordingLogger();
    const listener = new LoggingListener(logger, clock);
    const opened = (host: string) =>
      new CallEvent({
        kind: 'breakerOpened',
        policy: 'storefront',
        delay: 1000,
        dependency: { host },
      });
    listener.record(opened('flappy.example'));
    listener.record(opened('flappy.example'));
    listener.record(opened('steady.example'));
    listener.record(opened('flappy.example'));
    expect(logger.take()).toEqual([
      'warn [storefront] Breaker opened for 1.0s (host flappy.example)',
      'debug [storefront] Breaker opened for 1.0s (host flappy.example)',
      'warn [storefront] Breaker opened for 1.0s (host steady.example)',
      'debug [storefront] Breaker opened for 1.0s (host flappy.example)',
    ]);
    await clock.advance(REPEAT_WINDOW_MS);
    listener.record(opened('flappy.example'));
    expect(logger.take()).toEqual([
      'warn [storefront] Breaker opened for 1.0s (host flappy.example) (2 similar records logged at debug since the previous warning)',
    ]);
  });

  it(`keeps at most ${MAXIMUM_REPEAT_WINDOWS} repeat windows per policy, whatever the hosts: a window over goes first, else the oldest`, async () => {
    const clock = new FakeClock();
    const logger = new RecordingLogger();
    const listener = new LoggingListener(logger, clock);
    const opened = (host: string) =>
      new CallEvent({ kind: 'breakerOpened', policy: 'cdn', dependency: { host } });
    for (let i = 0; i < MAXIMUM_REPEAT_WINDOWS; i++) listener.record(opened(`edge-${i}.example`));
    // Every window still open: a new host takes the place of the oldest, edge-0 ...
    listener.record(opened('late.example'));
    expect(logger.take().filter((line) => line.startsWith('warn'))).toHaveLength(
      MAXIMUM_REPEAT_WINDOWS + 1,
    );
    // ... which then warns again inside its 30 s, while edge-1's window still holds.
    listener.record(opened('edge-1.example'));
    listener.record(opened('edge-0.example'));
    expect(logger.take()).toEqual([
      'debug [cdn] Breaker opened (host edge-1.example)',
      'warn [cdn] Breaker opened (host edge-0.example)',
    ]);
    // A thousand more hosts later the state is still bounded.
    for (let i = 0; i < 1000; i++) listener.record(opened(`more-${i}.example`));
    expect(
      (
        listener as unknown as { states: Map<string, { repeats: Map<string, unknown> }> }
      ).states.get('cdn')!.repeats.size,
    ).toBe(MAXIMUM_REPEAT_WINDOWS);
  });
});

describe('sampling: oneIn(n) (verbose profile)', () => {
  const traffic = (duration: number) =>
    new CallEvent({
      kind: 'succeeded',
      policy: 'payments',
      attempt: 1,
      verdict: 'Ok',
      duration,
      reason: 'succeeded',
      isTerminal: true,
    });
  const incident = new CallEvent({
    kind: 'rejected',
    policy: 'payments',
    attempt: 1,
    verdict: 'Transient',
    error: 'CallRejectedError',
    duration: 100,
    reason: 'budgetExhausted',
    isTerminal: true,
  });

  it('keeps exactly every nth traffic record per policy while healthy', () => {
    const clock = new FakeClock();
    const logger = new RecordingLogger();
    const listener = new LoggingListener(logger, clock, {
      profile: 'verbose',
      sampling: LogSampling.oneIn(4),
    });
    for (let i = 1; i <= 14; i++) listener.record(traffic(i));
    const other = new CallEvent({
      kind: 'succeeded',
      policy: 'ledger',
      attempt: 1,
      verdict: 'Ok',
      duration: 99,
      reason: 'succeeded',
      isTerminal: true,
    });
    for (let i = 1; i <= 4; i++) listener.record(other);
    expect(logger.take()).toEqual([
      'log [payments] Succeeded #1 (4ms)',
      'log [payments] Succeeded #1 (8ms)',
      'log [payments] Succeeded #1 (12ms)',
      'log [ledger] Succeeded #1 (99ms)',
    ]);
  });

  it('keeps every record for one minute after an incident, then samples again (the count goes on)', async () => {
    const clock = new FakeClock();
    const logger = new RecordingLogger();
    const listener = new LoggingListener(logger, clock, {
      profile: 'verbose',
      sampling: LogSampling.oneIn(3),
    });
    listener.record(traffic(1));
    listener.record(traffic(2)); // 2 sampled records so far, none kept
    await clock.advance(1_000 - clock.now());
    listener.record(incident); // incident window: until 61 000
    await clock.advance(1_000 + INCIDENT_WINDOW_MS - 1 - clock.now());
    listener.record(traffic(3));
    listener.record(traffic(4));
    expect(logger.take()).toEqual([
      'warn [payments] Retry refused after attempt #1 (Transient): the retry budget is spent (retries used up their share of recent calls; the dependency keeps failing); the call ended after 100ms with CallRejectedError',
      'log [payments] Succeeded #1 (3ms)',
      'log [payments] Succeeded #1 (4ms)',
    ]);
    await clock.advance(1_000 + INCIDENT_WINDOW_MS - clock.now());
    for (let i = 5; i <= 8; i++) listener.record(traffic(i)); // sampled records 3..6: the 3rd and the 6th are kept
    expect(logger.take()).toEqual([
      'log [payments] Succeeded #1 (5ms)',
      'log [payments] Succeeded #1 (8ms)',
    ]);
  });

  it('a demoted repeat also extends the incident window', async () => {
    const clock = new FakeClock();
    const logger = new RecordingLogger();
    const listener = new LoggingListener(logger, clock, {
      profile: 'verbose',
      sampling: LogSampling.oneIn(100),
    });
    listener.record(incident);
    await clock.advance(20_000 - clock.now());
    listener.record(incident); // demoted; incident window now until 80 000
    await clock.advance(79_999 - clock.now());
    listener.record(traffic(7));
    await clock.advance(80_000 - clock.now());
    listener.record(traffic(8));
    expect(logger.take()).toEqual([
      'warn [payments] Retry refused after attempt #1 (Transient): the retry budget is spent (retries used up their share of recent calls; the dependency keeps failing); the call ended after 100ms with CallRejectedError',
      'debug [payments] Retry refused after attempt #1 (Transient): the retry budget is spent (retries used up their share of recent calls; the dependency keeps failing); the call ended after 100ms with CallRejectedError',
      'log [payments] Succeeded #1 (7ms)',
    ]);
  });

  it('rejects invalid settings with the path, the value and the rule', () => {
    expect(() => LogSampling.oneIn(0)).toThrow(PolicyConfigError);
    expect(() => LogSampling.oneIn(2.5)).toThrow(
      'sampling.oneIn: 2.5 is invalid: must be an integer >= 1',
    );
    const clock = new FakeClock();
    const listen = (options: Parameters<typeof withLogging>[2]) => () =>
      new LoggingListener(new RecordingLogger(), clock, options);
    expect(listen({ profile: 'loud' as never })).toThrow(
      `logging.profile: "loud" is invalid: must be 'default' or 'verbose' for a listener ('off' attaches none)`,
    );
    expect(listen({ profile: null as never })).toThrow(
      `logging.profile: null is invalid: must be 'default' or 'verbose' for a listener ('off' attaches none)`,
    );
    expect(listen({ sampling: { oneIn: -1 } })).toThrow(
      'logging.sampling.oneIn: -1 is invalid: must be an integer >= 1 (keep one traffic record in n)',
    );
    expect(listen({ sampling: { oneIn: 2, every: 3 } as never })).toThrow(
      'logging.sampling.every: 3 is invalid: is not a known sampling option (oneIn)',
    );
    expect(listen({ sampling: null as never })).toThrow(
      /^logging\.sampling: null is invalid: must be a plain object /,
    );
    expect(listen({ repeatWindow: -1 })).toThrow(
      'logging.repeatWindow: -1 is invalid: must be a duration in ms >= 0 (or Infinity)',
    );
    expect(listen({ repeatWindow: null as never })).toThrow(
      'logging.repeatWindow: null is invalid: must be a duration in ms >= 0 (or Infinity)',
    );
    expect(listen({ incidentWindow: Number.NaN })).toThrow(
      'logging.incidentWindow: NaN is invalid: must be a duration in ms >= 0 (or Infinity)',
    );
    expect(listen({ incidentWindow: '60s' as never })).toThrow(
      'logging.incidentWindow: "60s" is invalid: must be a duration in ms >= 0 (or Infinity)',
    );
  });

  it('a repeat window of Infinity warns once per reason for ever (the rest demoted to debug)', async () => {
    const clock = new FakeClock();
    const logger = new RecordingLogger();
    const listener = new LoggingListener(logger, clock, { repeatWindow: Infinity });
    listener.record(incident);
    await clock.advance(24 * 3_600_000);
    listener.record(incident);
    expect(logger.take()).toEqual([
      'warn [payments] Retry refused after attempt #1 (Transient): the retry budget is spent (retries used up their share of recent calls; the dependency keeps failing); the call ended after 100ms with CallRejectedError',
      'debug [payments] Retry refused after attempt #1 (Transient): the retry budget is spent (retries used up their share of recent calls; the dependency keeps failing); the call ended after 100ms with CallRejectedError',
    ]);
  });
});
