import { describe, expect, it } from '@jest/globals';
import { FakeClock, Hedge, Resilience, RetryBudget } from '../../lib/core/index.js';
import { createResilientFetch } from '../../lib/http/index.js';

// The resilient fetch hedges only a GET, HEAD, OPTIONS or keyed request (its own rule, not the
// policy's): a hedged policy with `repeatable: true` sends a slow POST, PATCH, PUT or DELETE once.
describe('the resilient fetch under a hedged, repeatable policy', () => {
  it.each(['POST', 'PATCH', 'PUT', 'DELETE'])(
    'a slow %s past the warm threshold is sent once',
    async (method) => {
      const clock = new FakeClock();
      const policy = Resilience.http.with({
        clock,
        budget: RetryBudget.none,
        hedge: Hedge.at(0.95),
        repeatable: true,
      });
      const sent: string[] = [];
      let warming = true;
      const fetch = ((_url: unknown, init?: RequestInit) => {
        const slow = !warming && sent.length === 0;
        if (!warming) sent.push(init?.method ?? 'GET');
        return new Promise<Response>((resolve, reject) => {
          const timer = clock.setTimer(warming ? 10 : slow ? 1000 : 50, () =>
            resolve(new Response('ok')),
          );
          init?.signal?.addEventListener(
            'abort',
            () => {
              clock.clearTimer(timer);
              reject(init.signal!.reason);
            },
            { once: true },
          );
        });
      }) as typeof globalThis.fetch;
      const http = createResilientFetch({ policy, fetch });
      for (let i = 0; i < 25; i++) {
        const warm = http('http://example.test/a', { method });
        await clock.advance(10);
        await (await warm).text();
      }
      warming = false;
      const call = http('http://example.test/orders', {
        method,
        body: method === 'DELETE' ? undefined : '{"amount":42}',
      });
      await clock.advance(1100);
      expect((await call).status).toBe(200);
      expect(sent).toEqual([method]);
    },
  );
});
