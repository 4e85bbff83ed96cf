import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { type CallEvent, FakeClock, Hedge, Resilience, RetryBudget } from '../lib/core/index.js';
import { createResilienceInterceptor } from '../lib/grpc/index.js';
import { LoopbackGrpc, unary } from './support/grpc-loopback.js';
import { until } from './support/wire-wait.js';

// The gRPC interceptor hedges a unary method marked repeatable under a hedged policy: the loser is
// cancelled on the wire (the server sees the cancel); a method not marked is never hedged. The
// policy's clock is a FakeClock (the threshold is moved past by hand); the wire is real.

const ECHO = 'nresilience.test.Echo';

let server: LoopbackGrpc;

beforeAll(async () => {
  server = await LoopbackGrpc.start();
});
afterAll(() => server.close());
afterEach(() => server.reset());

function setup(service: 'Echo' | 'Ledger') {
  const clock = new FakeClock();
  const events: CallEvent[] = [];
  const policy = Resilience.default
    .with({ clock, budget: RetryBudget.none, hedge: Hedge.at(0.95) })
    .withListener((event) => events.push(event));
  const interceptor = createResilienceInterceptor({ policy, repeatable: [ECHO] });
  const client = server.client(service, { interceptors: [interceptor] });
  return { clock, events, interceptor, client };
}

describe('hedging through the gRPC interceptor (loopback)', () => {
  it('a slow unary call of a repeatable method is hedged: the hedge answers, the loser is cancelled on the wire', async () => {
    const { clock, events, interceptor, client } = setup('Echo');
    // Each service has its own window: Echo's is warmed (20 successes of 10 ms), Ledger's is not.
    const hedge = interceptor.policyFor(ECHO).hedger()!;
    for (let i = 0; i < 20; i++) hedge.latency.add(clock.now(), 10);
    expect(interceptor.policyFor('nresilience.test.Ledger').hedger()).not.toBe(hedge);
    server.script('Say', { delay: 3000 }, {});
    const outcome = unary(client, 'Say');
    await until(() => server.calls('Say').length === 1);
    await clock.advance(Math.ceil(hedge.threshold(clock.now())!));
    const { reply, error } = await outcome;
    expect({ reply, error }).toEqual({ reply: { text: 'reply 2', call: 2 }, error: undefined });
    const calls = server.calls('Say');
    expect(calls.map((call) => call.metadata.get('x-nresilience-retrying'))).toEqual([['1'], []]);
    // The loser's cancel reaches the server long before its handler would answer (3000 ms).
    await until(() => calls[0].cancelled, 1000);
    expect(
      events
        .filter((event) => event.kind === 'hedged' || event.kind === 'succeeded')
        .map((event) => `${event.kind}#${event.attempt} ${event.hedgeWon === true}`),
    ).toEqual(['hedged#2 false', 'succeeded#2 true']);
  });

  it('a method not marked repeatable is never hedged', async () => {
    const { clock, events, interceptor, client } = setup('Ledger');
    const hedge = interceptor.policyFor('nresilience.test.Ledger').hedger()!;
    for (let i = 0; i < 20; i++) hedge.latency.add(clock.now(), 10);
    server.script('Post', { delay: 200 });
    const outcome = unary(client, 'Post');
    await until(() => server.calls('Post').length === 1);
    await clock.advance(100);
    expect((await outcome).reply).toEqual({ text: 'reply 1', call: 1 });
    expect(server.calls('Post')).toHaveLength(1);
    expect(events.filter((event) => event.kind === 'hedged')).toEqual([]);
  });
});
