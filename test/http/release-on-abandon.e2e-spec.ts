import { afterEach, describe, expect, it } from '@jest/globals';
import { Agent } from 'node:http';
import axios from 'axios';
import { Backoff, FakeClock, Resilience, RetryBudget } from '../../lib/core/index.js';
import { createResilientFetch, installResilientAdapter } from '../../lib/http/index.js';
import { answer, loopbackServers } from '../support/loopback-server.js';
import { oneSocketAxios } from '../support/one-socket-axios.js';

// A call that ends while its retry waits in backoff (the caller aborts) leaves a failed answer nobody
// will read: it is released when the call rejects, not at a next attempt that never comes.

const { serve, closeAll } = loopbackServers();
const agents: Agent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.destroy();
  await closeAll();
});

describe('a failed answer is released when the call ends in backoff', () => {
  it('fetch: a 503, then the caller aborts during a 5 s backoff: the 503 body is cancelled', async () => {
    const bodies: string[] = [];
    const transport = (async () => {
      const i = bodies.push('open') - 1;
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            controller.enqueue(new TextEncoder().encode('x'));
            bodies[i] = 'read';
            controller.close();
          },
          cancel() {
            bodies[i] = 'cancelled';
          },
        },
        { highWaterMark: 0 },
      );
      return new Response(body, { status: 503 });
    }) as typeof globalThis.fetch;
    const clock = new FakeClock();
    const policy = Resilience.http.with({
      clock,
      backoff: Backoff.constant(5000),
      budget: RetryBudget.none,
    });
    const http = createResilientFetch({ policy, fetch: transport });
    const caller = new AbortController();
    const call = http('http://example.test/a', { signal: caller.signal }).then(
      (response) => `status ${response.status}`,
      (error: Error) => error.message,
    );
    await clock.advance(10);
    caller.abort(new Error('caller gone'));
    expect(await call).toBe('caller gone');
    await new Promise((resolve) => setImmediate(resolve));
    expect(bodies).toEqual(['cancelled']);
  });

  it('axios (responseType stream, one-socket keep-alive agent): a 502, then an abort in backoff: the stream is destroyed and the socket serves the next request', async () => {
    const server = await serve((n, _req, res) => answer(res, n === 0 ? 502 : 200, { n }));
    const { instance, bodies } = oneSocketAxios(agents);
    const clock = new FakeClock();
    await installResilientAdapter(instance, {
      policy: Resilience.default.with({
        clock,
        budget: RetryBudget.none,
        backoff: Backoff.constant(10_000),
      }),
    });
    const caller = new AbortController();
    const first = instance
      .get(`${server.url}/file`, { signal: caller.signal })
      .catch((error: Error) => error);
    // The wire is real: wait (bounded) for the 502 to arrive.
    for (let i = 0; i < 100 && bodies.length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    caller.abort(new Error('caller gone'));
    // axios itself turns a rejection under an aborted signal into its CanceledError.
    expect(axios.isCancel(await first)).toBe(true);
    expect({ attempts: bodies.length, destroyed: bodies[0]?.destroyed }).toEqual({
      attempts: 1,
      destroyed: true,
    });
    const next = await Promise.race([
      instance
        .get(`${server.url}/next`, { responseType: 'json' })
        .then((response) => response.status),
      new Promise((resolve) =>
        setTimeout(() => resolve('still waiting for the socket after 2000 ms'), 2000),
      ),
    ]);
    expect(next).toBe(200);
  });
});
