import { afterEach, describe, expect, it } from '@jest/globals';
import { Agent } from 'node:http';
import type { ServerResponse } from 'node:http';
import axios, { type AxiosResponse } from 'axios';
import {
  type CallEvent,
  FakeClock,
  Hedge,
  type Policy,
  Resilience,
  RetryBudget,
} from '../../lib/core/index.js';
import { createResilientFetch, installResilientAdapter } from '../../lib/http/index.js';
import { answer, loopbackServers } from '../support/loopback-server.js';
import { until, within } from '../support/wire-wait.js';

// The resilient fetch and the axios seam hedge a GET, HEAD, OPTIONS or keyed request under a hedged
// policy, on the wire: the loser is aborted and its connection let go; a POST is never hedged.
// The policy's clock is a FakeClock (the threshold is moved past by hand); the wire is real.

const { serve, closeAll } = loopbackServers();
const agents: Agent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.destroy();
  await closeAll();
});

/** A hedged policy on `clock`, recording its events. */
function hedgedPolicy(clock: FakeClock, events: CallEvent[]): Policy {
  return Resilience.default
    .with({ clock, budget: RetryBudget.none, hedge: Hedge.at(0.95), repeatable: true })
    .withListener((event) => events.push(event));
}

/** Warms a host's hedge: 20 successes of 10 ms in its window. Returns its threshold rounded up, ms. */
function warm(host: Policy, clock: FakeClock): number {
  const hedge = host.hedger()!;
  for (let i = 0; i < 20; i++) hedge.latency.add(clock.now(), 10);
  return Math.ceil(hedge.threshold(clock.now())!);
}

const hedgedEvents = (events: CallEvent[]) =>
  events
    .filter((event) => event.kind === 'hedged' || event.kind === 'succeeded')
    .map(
      (event) => `${event.kind}#${event.attempt}${event.hedgeWon === true ? ' (hedge won)' : ''}`,
    );

describe('hedging through the resilient fetch (loopback)', () => {
  it('a slow GET past the threshold is hedged: the fast answer wins, the loser is aborted on the wire, only the first attempt carries the marker', async () => {
    const closed: number[] = [];
    const slow: ServerResponse[] = [];
    const server = await serve((n, _req, res) => {
      if (n > 0) return answer(res, 200, { n });
      // The first request never answers: only its abort ends it.
      slow.push(res);
      res.on('close', () => closed.push(n));
    });
    const clock = new FakeClock();
    const events: CallEvent[] = [];
    const http = createResilientFetch({ policy: hedgedPolicy(clock, events) });
    const T = warm(http.hosts.for(server.url), clock);
    const call = http(`${server.url}/price`);
    await until(() => server.seen.length === 1);
    await clock.advance(T);
    const response = await call;
    expect(await response.json()).toEqual({ n: 1 });
    expect(
      server.seen.map((seen) => [seen.method, seen.url, seen.headers['x-nresilience-retrying']]),
    ).toEqual([
      ['GET', '/price', '1'],
      ['GET', '/price', undefined],
    ]);
    expect(hedgedEvents(events)).toEqual(['hedged#2', 'succeeded#2 (hedge won)']);
    // The loser's request was aborted: the server sees its connection close, unanswered.
    await until(() => closed.length === 1);
    expect({ closed, answered: slow[0].headersSent }).toEqual({ closed: [0], answered: false });
  });

  it('a POST is never hedged, even under a policy marked repeatable; PUT neither', async () => {
    for (const method of ['POST', 'PUT']) {
      const held: ServerResponse[] = [];
      const server = await serve((_n, _req, res) => void held.push(res));
      const clock = new FakeClock();
      const events: CallEvent[] = [];
      let sends = 0;
      const http = createResilientFetch({
        policy: hedgedPolicy(clock, events),
        fetch: (input, init) => (sends++, fetch(input, init)),
      });
      const T = warm(http.hosts.for(server.url), clock);
      const call = http(`${server.url}/orders`, { method, body: '{"amount":42}' });
      await until(() => held.length === 1);
      await clock.advance(10 * T);
      expect({ method, sends, hedged: events.filter((e) => e.kind === 'hedged').length }).toEqual({
        method,
        sends: 1,
        hedged: 0,
      });
      answer(held[0], 201, { created: true });
      expect((await call).status).toBe(201);
      expect(server.seen.map((seen) => seen.method)).toEqual([method]);
    }
  });

  it('a POST with an Idempotency-Key is hedged: both copies carry the key', async () => {
    const server = await serve((n, _req, res) => {
      if (n > 0) answer(res, 201, { n });
    });
    const clock = new FakeClock();
    const events: CallEvent[] = [];
    const http = createResilientFetch({ policy: hedgedPolicy(clock, events) });
    const T = warm(http.hosts.for(server.url), clock);
    const call = http(`${server.url}/orders`, {
      method: 'POST',
      headers: { 'Idempotency-Key': 'order-42' },
      body: '{"amount":42}',
    });
    await until(() => server.seen.length === 1);
    await clock.advance(T);
    const response = await call;
    expect([response.status, await response.json()]).toEqual([201, { n: 1 }]);
    expect(
      server.seen.map((seen) => [seen.headers['idempotency-key'], seen.body.toString()]),
    ).toEqual([
      ['order-42', '{"amount":42}'],
      ['order-42', '{"amount":42}'],
    ]);
  });
});

describe('hedging through the axios seam (loopback)', () => {
  it('a one-socket keep-alive agent: the hedge waits for the socket, is aborted when the first answer wins, and the socket serves the next request', async () => {
    let release: (() => void) | undefined;
    const server = await serve((n, req, res) => {
      if (req.url === '/slow' && n === 0) release = () => answer(res, 200, { n });
      else answer(res, 200, { n });
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    const instance = axios.create({ httpAgent: agent });
    const attempts: Promise<unknown>[] = [];
    const http = axios.getAdapter('http');
    instance.defaults.adapter = (config) => {
      const attempt = http(config);
      attempts.push(attempt.then((response: AxiosResponse) => response.data, String));
      return attempt;
    };
    const clock = new FakeClock();
    const events: CallEvent[] = [];
    const hosts = await installResilientAdapter(instance, { policy: hedgedPolicy(clock, events) });
    const T = warm(hosts.for(server.url), clock);
    const call = instance.get(`${server.url}/slow`);
    await until(() => release !== undefined);
    await clock.advance(T);
    // The hedge went to the transport; it waits for the agent's only socket.
    expect(attempts).toHaveLength(2);
    expect(Object.values(agent.requests).map((queued) => queued?.length)).toEqual([1]);
    release!();
    expect(((await call) as AxiosResponse).data).toEqual({ n: 0 });
    expect(hedgedEvents(events)).toEqual(['hedged#2', 'succeeded#2']);
    // The agent hands the socket to the queued hedge as the first response ends, before the race
    // is decided: the hedge is aborted then (its socket destroyed, not left to a request nobody reads).
    expect(await attempts[1]).toBe('CanceledError: canceled');
    const next = await within(
      instance.get(`${server.url}/next`).then((response) => response.status),
      2000,
    );
    expect(next).toBe(200);
    expect(server.seen.at(-1)?.url).toBe('/next');
  });

  it('a slow GET is hedged on a pooled agent: the hedge wins, the loser socket is closed, a POST is sent once', async () => {
    const closed: string[] = [];
    const held: ServerResponse[] = [];
    const server = await serve((n, req, res) => {
      if (n === 0 || req.method === 'POST') {
        held.push(res);
        res.on('close', () => closed.push(`${req.method} ${n}`));
        return;
      }
      answer(res, 200, { n });
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    agents.push(agent);
    const instance = axios.create({ httpAgent: agent });
    const clock = new FakeClock();
    const events: CallEvent[] = [];
    const hosts = await installResilientAdapter(instance, { policy: hedgedPolicy(clock, events) });
    const T = warm(hosts.for(server.url), clock);
    const call = instance.get(`${server.url}/price`);
    await until(() => server.seen.length === 1);
    await clock.advance(T);
    expect(((await call) as AxiosResponse).data).toEqual({ n: 1 });
    await until(() => closed.length === 1);
    expect(closed).toEqual(['GET 0']);

    const post = instance.post(`${server.url}/orders`, { amount: 42 });
    await until(() => server.seen.length === 3);
    await clock.advance(10 * T);
    answer(held[1], 201, { created: true });
    expect(((await post) as AxiosResponse).status).toBe(201);
    expect(server.seen.map((seen) => `${seen.method} ${seen.url}`)).toEqual([
      'GET /price',
      'GET /price',
      'POST /orders',
    ]);
    expect(hedgedEvents(events)).toEqual(['hedged#2', 'succeeded#2 (hedge won)', 'succeeded#1']);
  });
});

describe('hedging through the resilient fetch (transport stub)', () => {
  /** Answer `i` (0-based): a body recording in `bodies[i]` whether it was read or cancelled. */
  function trackedResponse(bodies: string[], i: number): Response {
    bodies[i] = 'open';
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          controller.enqueue(new TextEncoder().encode(`answer ${i + 1}`));
          bodies[i] = 'read';
          controller.close();
        },
        cancel() {
          bodies[i] = 'cancelled';
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body);
  }

  /** A transport whose answers arrive after `delays[attempt]` ms of the FakeClock. */
  function stubTransport(clock: FakeClock, delays: readonly number[]) {
    const bodies: string[] = [];
    const sent: string[] = [];
    const fetch = ((url: string, init?: RequestInit) => {
      const i = sent.push(String(url)) - 1;
      return new Promise<Response>((resolve, reject) => {
        const timer = clock.setTimer(delays[i], () => resolve(trackedResponse(bodies, i)));
        init?.signal?.addEventListener('abort', () => {
          clock.clearTimer(timer);
          reject(init.signal!.reason);
        });
      });
    }) as typeof globalThis.fetch;
    return { fetch, bodies, sent };
  }

  it('both copies answer in the same tick, before the race is decided: the caller reads the one that decided it, the other body is cancelled', async () => {
    const clock = new FakeClock();
    const events: CallEvent[] = [];
    const bodies: string[] = [];
    const answers: (() => void)[] = [];
    // Every request's answer waits for one timer at 30 ms, which lets all of them go at once.
    const fetch = (() =>
      new Promise<Response>((resolve) => {
        const i = answers.length;
        answers.push(() => resolve(trackedResponse(bodies, i)));
      })) as typeof globalThis.fetch;
    clock.setTimer(30, () => {
      for (const release of answers) release();
    });
    const http = createResilientFetch({ policy: hedgedPolicy(clock, events), fetch });
    warm(http.hosts.for('http://prices.test'), clock);
    const call = http('http://prices.test/a');
    await clock.advance(30);
    const response = await call;
    expect(answers).toHaveLength(2);
    expect(await response.text()).toBe('answer 1');
    expect(bodies).toEqual(['read', 'cancelled']);
  });

  it('each host has its own latency window: a warm host hedges, a cold one does not', async () => {
    const clock = new FakeClock();
    const events: CallEvent[] = [];
    const stub = stubTransport(clock, [100, 5, 100]);
    const http = createResilientFetch({ policy: hedgedPolicy(clock, events), fetch: stub.fetch });
    const T = warm(http.hosts.for('http://warm.test'), clock);
    expect(http.hosts.for('http://cold.test').hedger()!.threshold(clock.now())).toBeUndefined();
    const warmCall = http('http://warm.test/a');
    await clock.advance(T + 5);
    expect(await (await warmCall).text()).toBe('answer 2');
    const coldCall = http('http://cold.test/a');
    await clock.advance(100);
    expect(await (await coldCall).text()).toBe('answer 3');
    expect(stub.sent).toEqual(['http://warm.test/a', 'http://warm.test/a', 'http://cold.test/a']);
    expect(stub.bodies).toEqual([undefined, 'read', 'read']);
  });
});
