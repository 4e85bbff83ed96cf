import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import {
  Ambient,
  Backoff,
  Breaker,
  CallRejectedError,
  FakeClock,
  type PolicyOptions,
  RelayedRefusalError,
  Resilience,
  RetryBudget,
} from '../lib/core/index.js';
import {
  Classifier,
  createResilienceInterceptor,
  type ResilienceInterceptorOptions,
} from '../lib/grpc/index.js';
import { PolicyRegistry } from '../lib/nest/index.js';
import { EventRecorder } from '../lib/testing/index.js';
import { LoopbackGrpc, interceptedClient, stream, unary } from './support/grpc-loopback.js';

const ECHO = 'nresilience.test.Echo';
const LEDGER = 'nresilience.test.Ledger';

let server: LoopbackGrpc;

beforeAll(async () => {
  server = await LoopbackGrpc.start();
});
afterAll(() => server.close());
afterEach(() => server.reset());

/**
 * A FakeClock policy (no deadline, no attempt timeout: only backoff and guarded pauses wait on it)
 * and an Echo client through the interceptor. `drive` moves the fake clock to each pending timer
 * while the real socket does its part, so waits are observed exactly, without sleeping.
 */
function setup(
  options: Partial<ResilienceInterceptorOptions> = {},
  service: 'Echo' | 'Ledger' = 'Echo',
  changes: PolicyOptions = {},
) {
  return interceptedClient(server, service, { repeatable: [ECHO], ...options }, changes);
}

const delays = (recorder: EventRecorder) => recorder.ofKind('retrying').map((event) => event.delay);

describe('unary calls through the resilience interceptor', () => {
  it('retries UNAVAILABLE and answers with the attempt that succeeded; only the first attempt carries the retrying marker', async () => {
    const { client, drive, recorder } = setup();
    server.script(
      'Say',
      { code: grpc.status.UNAVAILABLE },
      { code: grpc.status.INTERNAL, headers: true },
    );
    const outcome = await drive(unary(client, 'Say'));
    expect(outcome.error).toBeUndefined();
    expect(outcome.reply).toEqual({ text: 'reply 3', call: 3 });
    expect(server.calls('Say').map((call) => call.metadata.get('x-nresilience-retrying'))).toEqual([
      ['1'],
      [],
      [],
    ]);
    // Headers the failed second attempt sent never reach the client: only the answer's.
    expect(outcome.headers.map((headers) => headers.get('x-call'))).toEqual([['3']]);
    expect(delays(recorder)).toEqual([100, 200]);
  });

  it.each([
    ['INVALID_ARGUMENT', grpc.status.INVALID_ARGUMENT],
    ['NOT_FOUND', grpc.status.NOT_FOUND],
    ['ALREADY_EXISTS', grpc.status.ALREADY_EXISTS],
    ['PERMISSION_DENIED', grpc.status.PERMISSION_DENIED],
    ['UNAUTHENTICATED', grpc.status.UNAUTHENTICATED],
    ['FAILED_PRECONDITION', grpc.status.FAILED_PRECONDITION],
    ['OUT_OF_RANGE', grpc.status.OUT_OF_RANGE],
    ['UNIMPLEMENTED', grpc.status.UNIMPLEMENTED],
  ])(
    '%s is an answer: delivered as sent, not retried, no breaker evidence',
    async (_name, code) => {
      const { client, drive, interceptor } = setup({}, 'Echo', { breaker: Breaker.default });
      server.script('Say', { code, details: 'no such thing' });
      const outcome = await drive(unary(client, 'Say'));
      expect([outcome.error?.code, outcome.error?.details]).toEqual([code, 'no such thing']);
      expect(server.calls('Say')).toHaveLength(1);
      expect(interceptor.policyFor(ECHO).breaker()!.snapshot().consecutiveFailures).toBe(0);
    },
  );

  it('RESOURCE_EXHAUSTED with grpc-retry-pushback-ms waits exactly the pushback (no jitter, no curve)', async () => {
    const { client, drive, recorder } = setup();
    server.script('Say', { code: grpc.status.RESOURCE_EXHAUSTED, pushback: '250' });
    const outcome = await drive(unary(client, 'Say'));
    expect(outcome.reply?.call).toBe(2);
    expect(delays(recorder)).toEqual([250]);
    expect(recorder.ofKind('attempt').map((event) => event.verdict)).toEqual(['Throttled', 'Ok']);
  });

  it('RESOURCE_EXHAUSTED without pushback is Throttled and waits the throttled base (1 s)', async () => {
    const { client, drive, recorder } = setup();
    server.script('Say', { code: grpc.status.RESOURCE_EXHAUSTED });
    expect((await drive(unary(client, 'Say'))).reply?.call).toBe(2);
    expect(delays(recorder)).toEqual([1000]);
  });

  it.each(['-1', 'abc', '1.5', ''])(
    'a pushback of %j means do not retry (gRFC A6)',
    async (value) => {
      const { client, drive } = setup();
      server.script('Say', { code: grpc.status.UNAVAILABLE, pushback: value });
      const outcome = await drive(unary(client, 'Say'));
      expect(outcome.error?.code).toBe(grpc.status.UNAVAILABLE);
      expect(server.calls('Say')).toHaveLength(1);
    },
  );

  it('a pushback on the last allowed attempt adds no attempt', async () => {
    const { client, drive } = setup({}, 'Echo', { attempts: 2 });
    server.script(
      'Say',
      { code: grpc.status.RESOURCE_EXHAUSTED, pushback: '10' },
      { code: grpc.status.RESOURCE_EXHAUSTED, pushback: '10' },
    );
    const outcome = await drive(unary(client, 'Say'));
    expect(outcome.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(server.calls('Say')).toHaveLength(2);
  });

  it('after a pushback the next computed backoff starts again from the initial base', async () => {
    const { client, drive, recorder } = setup({}, 'Echo', { attempts: 4 });
    server.script(
      'Say',
      { code: grpc.status.UNAVAILABLE },
      { code: grpc.status.UNAVAILABLE, pushback: '300' },
      { code: grpc.status.UNAVAILABLE },
    );
    const outcome = await drive(unary(client, 'Say'));
    expect(outcome.reply?.call).toBe(4);
    // 100 (retry 1), 300 (pushback), then 100 again — not 400, the third step of the curve.
    expect(delays(recorder)).toEqual([100, 300, 100]);
  });

  it('a method not marked repeatable makes one attempt and carries no retrying marker', async () => {
    const { client, drive } = setup({}, 'Ledger');
    server.script('Post', { code: grpc.status.UNAVAILABLE });
    const outcome = await drive(unary(client, 'Post'));
    expect(outcome.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(server.calls('Post').map((call) => call.metadata.get('x-nresilience-retrying'))).toEqual(
      [[]],
    );
  });

  it('repeatable can name a single method, and repeatableWhen decides per method', async () => {
    const byName = setup({ repeatable: [`${LEDGER}/Post`] }, 'Ledger');
    server.script('Post', { code: grpc.status.UNAVAILABLE });
    expect((await byName.drive(unary(byName.client, 'Post'))).reply?.call).toBe(2);
    const byRule = setup({
      repeatable: undefined,
      repeatableWhen: (method) => method.method === 'Say',
    });
    server.script('Say', { code: grpc.status.UNAVAILABLE });
    expect((await byRule.drive(unary(byRule.client, 'Say'))).reply?.call).toBe(2);
  });

  it("keeps state per service: one service's open breaker never refuses another's calls", async () => {
    const clock = new FakeClock();
    const interceptor = createResilienceInterceptor({
      policy: Resilience.default.with({ clock, attempts: 1, breaker: Breaker.default }),
      repeatable: [ECHO, LEDGER],
    });
    const echo = server.client('Echo', { interceptors: [interceptor] });
    const ledger = server.client('Ledger', { interceptors: [interceptor] });
    for (let i = 0; i < 5; i++) server.script('Say', { code: grpc.status.UNAVAILABLE });
    for (let i = 0; i < 5; i++)
      expect((await unary(echo, 'Say')).error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(interceptor.policyFor(ECHO).breaker()!.snapshot().state).toBe('open');
    expect(interceptor.policyFor(LEDGER).breaker()!.snapshot().state).toBe('closed');
    expect((await unary(ledger, 'Post')).reply?.call).toBe(1);
    const refused = unary(echo, 'Say');
    await clock.advance(100); // the guarded pause before a refusal is reported
    const outcome = await refused;
    expect(outcome.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect((outcome.error as unknown as { cause: unknown }).cause).toBeInstanceOf(
      CallRejectedError,
    );
    expect(server.calls('Say')).toHaveLength(5);
  });

  it("scopeBy: 'method' keeps state per method", async () => {
    const { client, drive, interceptor } = setup({ scopeBy: 'method' });
    expect((await drive(unary(client, 'Say'))).reply?.call).toBe(1);
    expect(interceptor.policyFor(`${ECHO}/Say`)).not.toBe(interceptor.policyFor(`${ECHO}/Watch`));
    expect(interceptor.policyFor(`${ECHO}/Say`).bucket()).not.toBe(
      interceptor.policyFor(`${ECHO}/Watch`).bucket(),
    );
  });

  it('holds at most maximumServices services: an evicted service comes back with fresh state', () => {
    const { interceptor } = setup({ maximumServices: 1 });
    const echo = interceptor.policyFor(ECHO);
    expect(interceptor.policyFor(ECHO)).toBe(echo);
    interceptor.policyFor(LEDGER);
    expect(interceptor.policyFor(ECHO)).not.toBe(echo);
  });

  it('follows a policy getter: a new policy (a registry reload) takes effect on the next call', async () => {
    const clock = new FakeClock();
    let current = Resilience.default.with({ clock, attempts: 1 });
    const interceptor = createResilienceInterceptor({ policy: () => current, repeatable: [ECHO] });
    const client = server.client('Echo', { interceptors: [interceptor] });
    server.script('Say', { code: grpc.status.UNAVAILABLE }, { code: grpc.status.UNAVAILABLE });
    expect((await unary(client, 'Say')).error?.code).toBe(grpc.status.UNAVAILABLE);
    current = Resilience.default.with({ clock, attempts: 2, backoff: Backoff.none });
    expect((await unary(client, 'Say')).reply?.call).toBe(3);
    expect(interceptor.policyFor(ECHO).options.attempts).toBe(2);
  });

  it.each([
    ['registry.handle(name)', (registry: PolicyRegistry) => registry.handle('orders')],
    [
      '() => registry.keyedTemplate(name)',
      (registry: PolicyRegistry) => () => registry.keyedTemplate('orders'),
    ],
  ])(
    'a service breaker opened by UNAVAILABLE answers stays open across reloads given %s: identical, of another policy, of its own config',
    async (_source, source) => {
      const clock = new FakeClock();
      const policies = {
        orders: { attempts: 1, breaker: { breakDuration: 60_000, jitter: 'none' as const } },
        other: { attempts: 2 },
      };
      const registry = PolicyRegistry.create({ policies, clock, random: () => 0.5 });
      const interceptor = createResilienceInterceptor({
        policy: source(registry),
        repeatable: [ECHO],
      });
      const echo = server.client('Echo', { interceptors: [interceptor] });
      for (let i = 0; i < 6; i++) server.script('Say', { code: grpc.status.UNAVAILABLE });
      while (interceptor.policyFor(ECHO).breaker()!.state === 'closed')
        expect((await unary(echo, 'Say')).error?.code).toBe(grpc.status.UNAVAILABLE);
      const breaker = interceptor.policyFor(ECHO).breaker()!;
      const sent = server.calls('Say').length;
      const refused = async () => {
        const pending = unary(echo, 'Say');
        await clock.advance(100); // the guarded pause before a refusal is reported
        const { error } = await pending;
        return [
          error?.code,
          (error as unknown as { cause: unknown }).cause instanceof CallRejectedError,
        ];
      };
      registry.reload({ policies });
      expect(await refused()).toEqual([grpc.status.UNAVAILABLE, true]);
      registry.reload({ policies: { ...policies, other: { attempts: 3 } } });
      expect(await refused()).toEqual([grpc.status.UNAVAILABLE, true]);
      registry.reload({ policies: { ...policies, orders: { ...policies.orders, attempts: 2 } } });
      expect(interceptor.policyFor(ECHO).options.attempts).toBe(2);
      expect(interceptor.policyFor(ECHO).breaker()).toBe(breaker);
      expect(await refused()).toEqual([grpc.status.UNAVAILABLE, true]);
      expect(server.calls('Say')).toHaveLength(sent);
      expect(registry.breaker('orders')!.state).toBe('closed');
    },
  );

  it("the caller's own deadline stops the call during a backoff: DEADLINE_EXCEEDED, no further attempt", async () => {
    const { client, clock, recorder } = setup({}, 'Echo', { backoff: Backoff.constant(5000) });
    server.script('Say', { code: grpc.status.UNAVAILABLE });
    const pending = unary(client, 'Say', { deadline: Date.now() + 1000 });
    while (recorder.ofKind('retrying').length === 0)
      await new Promise((resolve) => setTimeout(resolve, 2));
    // The next timer due is the caller's deadline (about 1000 ms), well before the 5 s backoff ends.
    expect(clock.nextDue).toBeLessThanOrEqual(1000);
    await clock.advance(1000);
    const outcome = await pending;
    expect(outcome.error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(server.calls('Say')).toHaveLength(1);
    expect(recorder.terminal.map((event) => event.reason)).toEqual(['cancelled']);
  });

  it('a retry the budget refuses ends the call as UNAVAILABLE with the refusal as cause', async () => {
    const { client, drive } = setup({}, 'Echo', {
      attempts: 2,
      budget: RetryBudget.automaticWith({ fraction: 0, minimumPerSecond: 0 }),
    });
    const outcomes = [];
    for (let i = 0; i < 11; i++) {
      server.script('Say', { code: grpc.status.UNAVAILABLE }, { code: grpc.status.UNAVAILABLE });
      outcomes.push(await drive(unary(client, 'Say')));
    }
    // The bucket holds 10 tokens and nothing refills it: the 11th call's retry is refused.
    expect(server.calls('Say')).toHaveLength(21);
    const last = outcomes.at(-1)!.error as grpc.ServiceError & { cause?: CallRejectedError };
    expect([last.code, last.cause?.reason]).toEqual([grpc.status.UNAVAILABLE, 'BudgetExhausted']);
    expect(last.details).toContain('BudgetExhausted');
  });

  it('a caller who cancels during the backoff gets CANCELLED and no further attempt is made', async () => {
    const { client, recorder } = setup();
    server.script('Say', { code: grpc.status.UNAVAILABLE });
    let call: grpc.ClientUnaryCall | undefined;
    const pending = unary(client, 'Say', {}, (c) => (call = c));
    while (recorder.ofKind('retrying').length === 0)
      await new Promise((resolve) => setTimeout(resolve, 2));
    call!.cancel();
    const outcome = await pending;
    expect(outcome.error?.code).toBe(grpc.status.CANCELLED);
    expect(server.calls('Say')).toHaveLength(1);
    expect(recorder.terminal.map((event) => event.reason)).toEqual(['cancelled']);
  });

  it('a refusal of one of our services below (UNAVAILABLE + x-nresilience-refusal) is passed up at once: one call, no wait, the same reason and pushback', async () => {
    const { client, clock, drive, recorder } = setup();
    server.script('Say', {
      code: grpc.status.UNAVAILABLE,
      details: 'refused',
      pushback: '2000',
      refusal: 'BudgetExhausted',
    });
    const outcome = await drive(unary(client, 'Say'));
    const cause = (outcome.error as (grpc.ServiceError & { cause?: unknown }) | undefined)?.cause;
    expect(cause).toBeInstanceOf(RelayedRefusalError);
    expect([
      (cause as RelayedRefusalError).reason,
      (cause as RelayedRefusalError).retryAfter,
      (cause as RelayedRefusalError).origin,
    ]).toEqual(['BudgetExhausted', 2000, ECHO]);
    expect([
      outcome.error?.code,
      outcome.error?.metadata.get('grpc-retry-pushback-ms'),
      outcome.error?.metadata.get('x-nresilience-refusal'),
    ]).toEqual([grpc.status.UNAVAILABLE, ['2000'], ['BudgetExhausted']]);
    expect(server.calls('Say')).toHaveLength(1);
    expect(clock.now()).toBe(0);
    expect(recorder.ofKind('attempt').map((event) => event.verdict)).toEqual(['Permanent']);
  });

  it('relayed refusals are no breaker evidence; an unknown reason is a plain UNAVAILABLE (retried)', async () => {
    const { client, drive, interceptor } = setup({}, 'Echo', {
      breaker: Breaker.with({ consecutiveFailures: 3 }),
    });
    for (let i = 0; i < 6; i++) {
      server.script('Say', { code: grpc.status.UNAVAILABLE, refusal: 'DependencyUnavailable' });
      expect((await drive(unary(client, 'Say'))).error?.code).toBe(grpc.status.UNAVAILABLE);
    }
    expect(server.calls('Say')).toHaveLength(6);
    expect(interceptor.policyFor(ECHO).breaker()!.state).toBe('closed');
    server.forget();
    server.script('Say', { code: grpc.status.UNAVAILABLE, refusal: 'Sleepy' });
    expect((await drive(unary(client, 'Say'))).reply?.call).toBe(2);
  });

  it('Classifier.grpc is what a policy with a preset classifier (default, http) runs with; a custom one is kept', () => {
    const { interceptor } = setup();
    expect(interceptor.policyFor(ECHO).options.classifier).toBe(Classifier.grpc);
    expect(setup({ policy: Resilience.http }).interceptor.policyFor(ECHO).options.classifier).toBe(
      Classifier.grpc,
    );
    const custom = Classifier.grpc.with(() => undefined);
    expect(setup({ classifier: custom }).interceptor.policyFor(ECHO).options.classifier).toBe(
      custom,
    );
  });
});

describe('wire deadlines (real clock, short bounds)', () => {
  it('puts min(attempt bound, caller deadline) + 50 ms on the wire', async () => {
    const interceptor = createResilienceInterceptor({
      policy: Resilience.default.with({ attemptTimeout: 400 }),
      repeatable: [ECHO],
    });
    const client = server.client('Echo', { interceptors: [interceptor] });
    await unary(client, 'Say');
    await unary(client, 'Say', { deadline: Date.now() + 200 });
    const [own, callers] = server.calls('Say').map((call) => call.remaining);
    expect(own).toBeGreaterThan(400);
    expect(own).toBeLessThanOrEqual(450);
    expect(callers).toBeGreaterThan(200);
    expect(callers).toBeLessThanOrEqual(250);
  });

  it("a server stream carries only the caller's deadline on the wire: the policy's deadline bounds its first message, not the stream", async () => {
    const interceptor = createResilienceInterceptor({
      policy: Resilience.default.with({ deadline: 300, attemptTimeout: 100 }),
      repeatable: [ECHO],
    });
    const client = server.client('Echo', { interceptors: [interceptor] });
    const own = await stream(client, 'Watch');
    const callers = await stream(client, 'Watch', { deadline: Date.now() + 200 });
    expect(own.error).toBeUndefined();
    expect(callers.error).toBeUndefined();
    const [unbounded, bounded] = server.calls('Watch').map((call) => call.remaining);
    expect(unbounded).toBe(Infinity);
    expect(bounded).toBeGreaterThan(100);
    expect(bounded).toBeLessThanOrEqual(250);
  });

  it('a slow attempt ends by our timer as an attempt timeout (cancelled on the wire), not a transport DEADLINE_EXCEEDED', async () => {
    const recorder = new EventRecorder();
    const interceptor = createResilienceInterceptor({
      policy: Resilience.default
        .with({ attemptTimeout: 100, backoff: Backoff.none })
        .withListener(recorder.record),
      repeatable: [ECHO],
    });
    const client = server.client('Echo', { interceptors: [interceptor] });
    server.script('Say', { delay: 300 });
    const outcome = await unary(client, 'Say');
    expect(outcome.reply?.call).toBe(2);
    expect(recorder.ofKind('attempt').map((event) => [event.verdict, event.error])).toEqual([
      ['Transient', 'AttemptTimeoutError'],
      ['Ok', undefined],
    ]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(server.calls('Say')[0]!.cancelled).toBe(true);
  });

  it('the last attempt timing out reaches the caller as DEADLINE_EXCEEDED', async () => {
    const interceptor = createResilienceInterceptor({
      policy: Resilience.default.with({ attempts: 1, attemptTimeout: 50 }),
      repeatable: [ECHO],
    });
    const client = server.client('Echo', { interceptors: [interceptor] });
    server.script('Say', { delay: 200 });
    const outcome = await unary(client, 'Say');
    expect(outcome.error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(outcome.error?.details).toContain('attempt timed out after 50ms');
  });

  it('a call whose remaining time is already <= 0 is never put on the wire', async () => {
    const interceptor = createResilienceInterceptor({
      policy: Resilience.default,
      repeatable: [ECHO],
    });
    const client = server.client('Echo', { interceptors: [interceptor] });
    const outcome = await unary(client, 'Say', { deadline: Date.now() - 1 });
    expect(outcome.error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(server.calls('Say')).toHaveLength(0);
  });
});

describe('the ambient context (inbound request being served)', () => {
  it("bounds the wire deadline by the inbound request's remaining time and sends what is left as x-nresilience-remaining-ms", async () => {
    const interceptor = createResilienceInterceptor({
      policy: Resilience.default,
      repeatable: [ECHO],
    });
    const client = server.client('Echo', { interceptors: [interceptor] });
    await Ambient.run({ remaining: 150 }, () => unary(client, 'Say'));
    const [call] = server.calls('Say');
    expect(call!.remaining).toBeGreaterThan(100);
    expect(call!.remaining).toBeLessThanOrEqual(200);
    const sent = Number(call!.metadata.get('x-nresilience-remaining-ms')[0]);
    expect(sent).toBeGreaterThan(100);
    expect(sent).toBeLessThanOrEqual(150);
  });

  it('an inbound request with no time left is never put on the wire', async () => {
    const { client, drive } = setup();
    const outcome = await drive(Ambient.run({ remaining: 0 }, () => unary(client, 'Say')));
    expect(outcome.error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(server.calls('Say')).toHaveLength(0);
  });

  it('inside Resilience.singleShot a repeatable call makes one attempt and still carries the retrying marker (the layer above retries it)', async () => {
    const { client, drive } = setup();
    server.script('Say', { code: grpc.status.UNAVAILABLE });
    const outcome = await drive(Resilience.singleShot(() => unary(client, 'Say')));
    expect(outcome.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(server.calls('Say').map((call) => call.metadata.get('x-nresilience-retrying'))).toEqual([
      ['1'],
    ]);
  });

  it('inside Resilience.singleShot a call not marked repeatable carries no retrying marker', async () => {
    const { client, drive } = setup({ repeatable: [] });
    server.script('Say', { code: grpc.status.UNAVAILABLE });
    await drive(Resilience.singleShot(() => unary(client, 'Say')));
    expect(server.calls('Say').map((call) => call.metadata.get('x-nresilience-retrying'))).toEqual([
      [],
    ]);
  });

  it('propagateCriticality sends the ambient criticality; without it none is sent', async () => {
    const on = setup({ propagateCriticality: true });
    await on.drive(Ambient.run({ criticality: 'sheddable' }, () => unary(on.client, 'Say')));
    const off = setup();
    await off.drive(Ambient.run({ criticality: 'sheddable' }, () => unary(off.client, 'Say')));
    expect(
      server.calls('Say').map((call) => call.metadata.get('x-nresilience-criticality')),
    ).toEqual([['sheddable'], []]);
  });
});

describe('server streaming and client streaming', () => {
  it('retries a stream that fails before its first message (headers then failure), then delivers it whole', async () => {
    const { client, drive } = setup();
    server.script('Watch', { code: grpc.status.UNAVAILABLE, headers: true }, { messages: 3 });
    const result = await drive(stream(client, 'Watch'));
    expect(result.error).toBeUndefined();
    expect(result.messages).toEqual([1, 2, 3].map((i) => ({ text: `message ${i}`, call: 2 })));
    expect(server.calls('Watch')).toHaveLength(2);
  });

  it('after the first message the consumer owns failures: no retry, no duplicate message', async () => {
    const { client, drive } = setup();
    server.script('Watch', { messages: 2, code: grpc.status.UNAVAILABLE });
    const result = await drive(stream(client, 'Watch'));
    expect(result.messages).toEqual([1, 2].map((i) => ({ text: `message ${i}`, call: 1 })));
    expect(result.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(server.calls('Watch')).toHaveLength(1);
  });

  it('an empty stream ends cleanly', async () => {
    const { client, drive } = setup();
    server.script('Watch', { messages: 0 });
    const result = await drive(stream(client, 'Watch'));
    expect([result.messages, result.error]).toEqual([[], undefined]);
  });

  it('client streaming passes through untouched: one call, its failure as sent, no marker', async () => {
    const { client } = setup();
    server.script('Collect', { code: grpc.status.UNAVAILABLE, details: 'once' });
    const error = await new Promise<grpc.ServiceError | null>((resolve) => {
      const call = (
        client as unknown as Record<
          string,
          (cb: (e: grpc.ServiceError | null) => void) => grpc.ClientWritableStream<unknown>
        >
      ).Collect!((e) => resolve(e));
      call.write({ text: 'a' });
      call.end();
    });
    expect([error?.code, error?.details]).toEqual([grpc.status.UNAVAILABLE, 'once']);
    expect(
      server.calls('Collect').map((call) => call.metadata.get('x-nresilience-retrying')),
    ).toEqual([[]]);
  });
});

describe('createResilienceInterceptor options', () => {
  it.each([
    ['policy', { policy: 'payments' }],
    ['scopeBy', { policy: Resilience.default, scopeBy: 'host' }],
    ['maximumServices', { policy: Resilience.default, maximumServices: 0 }],
    ['repeatable', { policy: Resilience.default, repeatable: 'shop.Catalog' }],
    ['repeatableWhen', { policy: Resilience.default, repeatableWhen: true }],
    ['retries', { policy: Resilience.default, retries: 3 }],
  ])('rejects a bad %s, naming it', (field, options) => {
    expect(() =>
      createResilienceInterceptor(options as unknown as ResilienceInterceptorOptions),
    ).toThrow(expect.objectContaining({ name: 'PolicyConfigError', field }));
  });

  it('says the rule of scopeBy, maximumServices and propagateCriticality', () => {
    const create = (options: Record<string, unknown>) => () =>
      createResilienceInterceptor({
        policy: Resilience.default,
        ...options,
      } as ResilienceInterceptorOptions);
    expect(create({ scopeBy: 'host' })).toThrow(
      `scopeBy: "host" is invalid: must be 'service' or 'method'`,
    );
    expect(create({ maximumServices: 0 })).toThrow(
      'maximumServices: 0 is invalid: must be an integer >= 1 (the most services or methods with their own state), at most 1000000',
    );
    // The bound becomes the services' scope's maximumKeys: refused here, by its own name, not at the first call.
    expect(create({ maximumServices: 2_000_000 })).toThrow(
      'maximumServices: 2000000 is invalid: must be an integer >= 1 (the most services or methods with their own state), at most 1000000',
    );
    expect(create({ propagateCriticality: 'yes' })).toThrow(
      'propagateCriticality: "yes" is invalid: must be true or false',
    );
  });
});
