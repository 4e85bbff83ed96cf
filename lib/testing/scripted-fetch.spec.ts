import { getEventListeners } from 'node:events';
import { FakeClock, PolicyConfigError, Resilience, RetryBudget } from '../core/index.js';
import { ScriptedFetch } from './scripted-fetch.js';

describe('ScriptedFetch', () => {
  it('answers statuses, headers and bodies in script order, then repeats the last answer', async () => {
    const transport = new ScriptedFetch()
      .responds(503, {
        times: 2,
        headers: { 'Retry-After': '1' },
        statusText: 'Service Unavailable',
      })
      .responds(200, { json: { id: 7 } })
      .responds(201, { body: new Uint8Array([1, 2, 3]), headers: [['x-id', 'a']] });
    const { fetch } = transport;

    const first = await fetch('https://api.test/orders/7');
    expect(first.status).toBe(503);
    expect(first.statusText).toBe('Service Unavailable');
    expect(first.headers.get('retry-after')).toBe('1');
    expect(first.url).toBe('https://api.test/orders/7');
    expect((await fetch('https://api.test/orders/7')).status).toBe(503);

    const ok = await fetch(new URL('https://api.test/orders/7'));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('application/json');
    await expect(ok.json()).resolves.toEqual({ id: 7 });

    for (let i = 0; i < 2; i++) {
      const created = await fetch('https://api.test/orders', { method: 'POST' });
      expect(created.status).toBe(201);
      expect(created.headers.get('x-id')).toBe('a');
      expect(new Uint8Array(await created.arrayBuffer())).toEqual(new Uint8Array([1, 2, 3]));
    }
    expect(transport.callCount).toBe(5);
    expect(transport.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET https://api.test/orders/7',
      'GET https://api.test/orders/7',
      'GET https://api.test/orders/7',
      'POST https://api.test/orders',
      'POST https://api.test/orders',
    ]);
  });

  it('records method, url, lower-case headers and body bytes', async () => {
    const transport = new ScriptedFetch().responds(204);
    await transport.fetch('https://api.test/pay?x=1', {
      method: 'post',
      headers: { 'Idempotency-Key': 'k-1', 'Content-Type': 'application/json' },
      body: '{"amount":5}',
    });
    await transport.fetch(
      new Request('https://api.test/pay', { method: 'PUT', body: new Uint8Array([0, 255]) }),
    );
    await transport.fetch('https://api.test/health');
    expect(transport.requests).toEqual([
      {
        method: 'POST',
        url: 'https://api.test/pay?x=1',
        headers: { 'idempotency-key': 'k-1', 'content-type': 'application/json' },
        body: new TextEncoder().encode('{"amount":5}'),
      },
      { method: 'PUT', url: 'https://api.test/pay', headers: {}, body: new Uint8Array([0, 255]) },
      { method: 'GET', url: 'https://api.test/health', headers: {}, body: undefined },
    ]);
    expect(transport.requests[0]!.body).toBeInstanceOf(Uint8Array);
  });

  it('throws scripted network errors, counted like any request', async () => {
    const failure = new TypeError('fetch failed', { cause: new Error('ECONNRESET') });
    const transport = new ScriptedFetch().throws(failure, 2).responds(200);
    await expect(transport.fetch('https://api.test/')).rejects.toBe(failure);
    await expect(transport.fetch('https://api.test/')).rejects.toBe(failure);
    await expect(transport.fetch('https://api.test/')).resolves.toMatchObject({ status: 200 });
    expect(transport.callCount).toBe(3);
  });

  it('waits a scripted delay on the clock: not settled at 99 ms, settled at 100', async () => {
    const clock = new FakeClock();
    const transport = new ScriptedFetch({ clock }).responds(200, { delay: 100 });
    let status = 0;
    void transport.fetch('https://api.test/').then((r) => (status = r.status));
    await clock.advance(99);
    expect(status).toBe(0);
    await clock.advance(1);
    expect(status).toBe(200);
    const failing = new ScriptedFetch({ clock }).throws(new Error('slow failure'), { delay: 20 });
    let error: unknown;
    void failing.fetch('https://api.test/').catch((e: unknown) => (error = e));
    await clock.advance(19);
    expect(error).toBeUndefined();
    await clock.advance(1);
    expect((error as Error).message).toBe('slow failure');
  });

  it('an abort during a delay rejects with an AbortError, clears the timer and the listener', async () => {
    const clock = new FakeClock();
    const transport = new ScriptedFetch({ clock }).responds(200, { delay: 5_000 });
    const controller = new AbortController();
    const call = transport.fetch('https://api.test/', { signal: controller.signal });
    await clock.advance(10);
    expect(clock.pending).toBe(1);
    controller.abort();
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe('AbortError');
    expect(clock.pending).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(transport.callCount).toBe(1);
  });

  it('rejects with a custom abort reason, and obeys the signal of an input Request', async () => {
    const clock = new FakeClock();
    const transport = new ScriptedFetch({ clock }).responds(200, { delay: 50 });
    const controller = new AbortController();
    const call = transport.fetch(new Request('https://api.test/', { signal: controller.signal }));
    await clock.advance(1);
    const reason = new Error('deadline');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    expect(clock.pending).toBe(0);
  });

  it('an already-aborted signal rejects at once and is neither counted nor recorded', async () => {
    const transport = new ScriptedFetch().responds(200);
    const reason = new Error('gone');
    await expect(
      transport.fetch('https://api.test/', { signal: AbortSignal.abort(reason) }),
    ).rejects.toBe(reason);
    expect(transport.callCount).toBe(0);
    expect(transport.remaining).toBe(1);
  });

  it('leaves a shared signal with no listener after many requests', async () => {
    const transport = new ScriptedFetch().responds(200);
    const controller = new AbortController();
    for (let i = 0; i < 50; i++)
      await transport.fetch('https://api.test/', { signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('rejects like fetch for input the Request constructor refuses, and explains an empty script', async () => {
    const transport = new ScriptedFetch().responds(200);
    // Undici's TypeError comes from another realm under Jest's VM modules, so compare by name.
    await expect(transport.fetch('/relative')).rejects.toMatchObject({ name: 'TypeError' });
    await expect(
      transport.fetch('https://api.test/', { method: 'GET', body: 'x' }),
    ).rejects.toMatchObject({ name: 'TypeError' });
    expect(transport.callCount).toBe(0);
    await expect(new ScriptedFetch().fetch('https://api.test/')).rejects.toThrow(
      'ScriptedFetch: no answer scripted; add responds() or throws() before fetching',
    );
  });

  it('validates the script with PolicyConfigError', () => {
    const transport = new ScriptedFetch();
    expect(() => transport.responds(99)).toThrow(
      'status: 99 is invalid: must be an integer HTTP status in [200, 599]',
    );
    expect(() => transport.responds(200, { times: 0 })).toThrow(
      'times: 0 is invalid: must be an integer >= 1',
    );
    expect(() => transport.responds(200, { delay: -5 })).toThrow(
      'delay: -5 is invalid: must be a finite duration in ms >= 0',
    );
    expect(() => transport.responds(204, { body: 'x' })).toThrow(
      'body: "x" is invalid: must be absent for status 204 (a null-body status)',
    );
    expect(() => transport.responds(200, { body: 'x', json: 1 })).toThrow(PolicyConfigError);
    expect(() => transport.responds(200, { headers: { 'bad name': 'x' } })).toThrow(
      PolicyConfigError,
    );
    expect(() => transport.throws(new Error(), { times: -1 })).toThrow(
      'times: -1 is invalid: must be an integer >= 1',
    );
    expect(transport.remaining).toBe(0);
  });

  it('drives the real policy: two 503 answers retried, third succeeds', async () => {
    const clock = new FakeClock();
    const transport = new ScriptedFetch({ clock })
      .responds(503, { times: 2 })
      .responds(200, { body: 'ok' });
    const policy = Resilience.default.with({ clock, random: () => 0.5, budget: RetryBudget.none });
    const call = policy.run(async ({ signal }) => {
      const response = await transport.fetch('https://api.test/', { signal });
      if (response.status >= 500) throw new Error(`HTTP ${response.status}`);
      return response.text();
    });
    await clock.runAll();
    await expect(call).resolves.toBe('ok');
    expect(transport.callCount).toBe(3);
  });
});
