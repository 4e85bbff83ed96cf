import { afterEach, describe, expect, it } from '@jest/globals';
import {
  Ambient,
  AttemptStalledError,
  Backoff,
  Breaker,
  CallRejectedError,
  DeadlineExceededError,
  Limit,
  Resilience,
  RetryBudget,
  SystemClock,
} from '../../lib/core/index.js';
import {
  BodyNotReplayableError,
  NotRepeatableError,
  createResilientFetch,
  markRepeatable,
  type ResilientFetchOptions,
} from '../../lib/http/index.js';
import { type Script, answer, loopbackServers, reset } from '../support/loopback-server.js';
import { type PolicyChanges, jumpingPolicy } from '../support/jumping-policy.js';

const { serve, closeAll } = loopbackServers();
afterEach(closeAll);

/** A resilient fetch under {@link jumpingPolicy}: retries happen at once, `events` shows the exact delays. */
function setup(extra: Partial<ResilientFetchOptions> = {}, policyChanges: PolicyChanges = {}) {
  const { clock, events, policy } = jumpingPolicy('api', policyChanges);
  const http = createResilientFetch({ policy, ...extra });
  return { clock, events, http, policy };
}

const ok: Script = (_n, _req, res) => answer(res, 200, { ok: true });
const resetThenOk: Script = (n, req, res) =>
  n === 0 ? reset(req) : answer(res, 200, { ok: true });

describe('idempotency on a connection reset after the server read the request', () => {
  it('sends a POST exactly once and rejects saying it was not retried because it is not idempotent', async () => {
    const server = await serve(resetThenOk);
    const { events, http } = setup();
    const failure = await http(`${server.url}/orders`, {
      method: 'POST',
      body: '{"item":1}',
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NotRepeatableError);
    expect((failure as Error).message).toBe(
      `POST ${server.url}/orders failed (ECONNRESET) and was not retried: POST is not idempotent and the server may have acted on it. ` +
        'If the server deduplicates by Idempotency-Key, mark the request with markRepeatable(init, key) to let it retry',
    );
    // undici's TypeError comes from another realm under Jest: compare by name.
    const cause = (failure as Error).cause as TypeError;
    expect([cause.name, (cause.cause as { code?: string }).code]).toEqual([
      'TypeError',
      'ECONNRESET',
    ]);
    expect(server.seen.map((r) => r.method)).toEqual(['POST']);
    expect(events.filter((e) => e.isTerminal).map((e) => [e.kind, e.reason, e.verdict])).toEqual([
      ['failed', 'notRepeatable', 'Transient'],
    ]);
  });

  it('sends a POST whose attempt timed out exactly once', async () => {
    let arrived!: () => void;
    const received = new Promise<void>((resolve) => (arrived = resolve));
    // Reads the request and never answers: only the attempt timeout ends the attempt.
    const server = await serve(() => arrived());
    const { clock, events, http } = setup({}, { attemptTimeout: 100 });
    const call = http(`${server.url}/orders`, { method: 'POST', body: 'b' }).catch(
      (error: unknown) => error,
    );
    await received;
    await clock.advance(100);
    const failure = await call;
    expect(failure).toBeInstanceOf(NotRepeatableError);
    expect((failure as Error).message).toContain(
      'failed (AttemptTimeoutError) and was not retried',
    );
    expect(((failure as Error).cause as Error).name).toBe('AttemptTimeoutError');
    expect(server.seen).toHaveLength(1);
    expect(events.filter((e) => e.isTerminal).map((e) => e.reason)).toEqual(['notRepeatable']);
  });

  it('reports attemptsExhausted, not notRepeatable, for a POST under a single-attempt policy', async () => {
    const server = await serve(resetThenOk);
    const { events, http } = setup({}, { attempts: 1 });
    const failure = await http(`${server.url}/orders`, { method: 'POST', body: 'b' }).catch(
      (error: unknown) => error,
    );
    expect((failure as Error).name).toBe('TypeError');
    expect(events.filter((e) => e.isTerminal).map((e) => e.reason)).toEqual(['attemptsExhausted']);
  });

  it.each(['GET', 'PUT', 'DELETE'])('retries %s', async (method) => {
    const server = await serve(resetThenOk);
    const { http } = setup();
    const response = await http(`${server.url}/orders/1`, {
      method,
      body: method === 'PUT' ? 'v' : undefined,
    });
    expect(response.status).toBe(200);
    expect(server.seen.map((r) => r.method)).toEqual([method, method]);
  });

  it('retries a POST after a definitive refusal (429, 503) but not after a 500', async () => {
    for (const [status, sent] of [
      [429, 2],
      [503, 2],
      [500, 1],
    ] as const) {
      const server = await serve((n, _req, res) => answer(res, n === 0 ? status : 201));
      const { http } = setup();
      const response = await http(`${server.url}/orders`, { method: 'POST', body: 'x' });
      expect([status, response.status, server.seen.length]).toEqual([
        status,
        sent === 2 ? 201 : 500,
        sent,
      ]);
    }
  });

  it('markRepeatable lets a POST retry with the same key and body on every attempt, a fresh key per call', async () => {
    const server = await serve((n, req, res) => (n % 2 === 0 ? reset(req) : answer(res, 201)));
    const { http } = setup();
    const init = markRepeatable({ method: 'POST', body: '{"amount":42}' });
    expect((await http(`${server.url}/charges`, init)).status).toBe(201);
    expect((await http(`${server.url}/charges`, init)).status).toBe(201);
    const keys = server.seen.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^"[0-9a-f-]{36}"$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[3]).toBe(keys[2]);
    expect(keys[2]).not.toBe(keys[0]);
    expect(server.seen.map((r) => r.body.toString())).toEqual(Array(4).fill('{"amount":42}'));
  });

  it('a Request marked without a key retries a reset POST with one key, and so does a copy new Request(marked, init) makes', async () => {
    const server = await serve((n, req, res) => (n % 2 === 0 ? reset(req) : answer(res, 201)));
    const { http } = setup();
    const marked = markRepeatable(
      new Request(`${server.url}/charges`, { method: 'POST', body: 'b' }),
    );
    expect((await http(marked)).status).toBe(201);
    const copy = new Request(
      markRepeatable(new Request(`${server.url}/charges`, { method: 'POST', body: 'c' })),
      { signal: new AbortController().signal },
    );
    expect((await http(copy)).status).toBe(201);
    const keys = server.seen.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^"[0-9a-f-]{36}"$/);
    expect([keys[1] === keys[0], keys[3] === keys[2], keys[2] === keys[0]]).toEqual([
      true,
      true,
      false,
    ]);
    expect(keys[2]).toMatch(/^"[0-9a-f-]{36}"$/);
    expect(server.seen.map((r) => r.body.toString())).toEqual(['b', 'b', 'c', 'c']);
  });

  it('a spread or Object.assign copy of a request marked without a key still gets a fresh key per call', async () => {
    const server = await serve((n, req, res) => (n % 2 === 0 ? reset(req) : answer(res, 201)));
    const { http } = setup();
    const marked = markRepeatable<RequestInit>({ method: 'POST', body: 'b' });
    const controller = new AbortController();
    for (const copy of [
      { ...marked, signal: controller.signal },
      { ...marked },
      Object.assign({}, marked),
    ]) {
      expect((await http(`${server.url}/charges`, copy)).status).toBe(201);
    }
    const keys = server.seen.map((r) => r.headers['idempotency-key']);
    // Two attempts (reset, then 201) per call: the same key within a call, a new one for each call.
    expect([keys[1] === keys[0], keys[3] === keys[2], keys[5] === keys[4]]).toEqual([
      true,
      true,
      true,
    ]);
    expect(new Set([keys[0], keys[2], keys[4]]).size).toBe(3);
    // The key stamped on the original when it was marked is none of them.
    expect(keys).not.toContain((marked.headers as Record<string, string>)['idempotency-key']);
  });

  it('markRepeatable with a key sends that key as a structured-field string', async () => {
    const server = await serve(resetThenOk);
    const { http } = setup();
    await http(
      `${server.url}/charges`,
      markRepeatable({ method: 'POST', body: 'b', headers: { 'x-a': '1' } }, 'order-123'),
    );
    expect(server.seen.map((r) => [r.headers['idempotency-key'], r.headers['x-a']])).toEqual([
      ['"order-123"', '1'],
      ['"order-123"', '1'],
    ]);
  });

  it('escapes " and \\ in a key as the sf-string form does, and sends a header the caller set as given', async () => {
    const server = await serve((n, req, res) => (n % 2 === 0 ? reset(req) : answer(res, 201)));
    const { http } = setup();
    await http(`${server.url}/charges`, markRepeatable({ method: 'POST', body: 'b' }, 'a"b\\c d'));
    await http(`${server.url}/charges`, {
      method: 'POST',
      body: 'b',
      headers: { 'Idempotency-Key': 'bare-token' },
    });
    expect(server.seen.map((r) => r.headers['idempotency-key'])).toEqual([
      '"a\\"b\\\\c d"',
      '"a\\"b\\\\c d"',
      'bare-token',
      'bare-token',
    ]);
  });

  it.each([
    ['an empty key', '', 'got 0 characters'],
    ['a key of 256 characters', 'k'.repeat(256), 'got 256 characters'],
    ['a line feed', 'order\n42', 'U+000A at index 5 is not'],
    ['a non-ASCII character', 'ordér', 'U+00E9 at index 3 is not'],
    ['a number', 42, 'got number'],
  ])('refuses %s as a key, naming the field and the rule', (_case, key, why) => {
    const rule =
      'must be 1 to 255 printable ASCII characters (0x20-0x7E, the characters a structured-field string may hold: RFC 8941 §3.3.3)';
    expect(() => markRepeatable({}, key as string)).toThrow(`${rule}; ${why}`);
    expect(() => markRepeatable({}, key as string)).toThrow(/^idempotencyKey: /);
  });
});

describe('request bodies are replayed byte-identical', () => {
  const bodies: [string, () => RequestInit['body']][] = [
    ['string', () => 'héllo wörld'],
    ['Buffer', () => Buffer.from([0, 1, 2, 250])],
    ['Uint8Array', () => new Uint8Array([9, 8, 7])],
    ['URLSearchParams', () => new URLSearchParams({ a: '1', b: 'two' })],
    [
      'FormData',
      () => {
        const form = new FormData();
        form.append('field', 'value');
        form.append('file', new Blob(['file-bytes']), 'f.txt');
        return form;
      },
    ],
    ['Blob', () => new Blob(['blob-bytes'])],
    ['a small ReadableStream', () => new Blob(['streamed-bytes']).stream()],
  ];

  it.each(bodies)('%s: same bytes and Content-Length on both attempts', async (_kind, make) => {
    const server = await serve(resetThenOk);
    const { http } = setup();
    const body = make();
    const init: RequestInit = { method: 'PUT', body };
    if (body instanceof ReadableStream) (init as { duplex?: string }).duplex = 'half';
    expect((await http(`${server.url}/doc`, init)).status).toBe(200);
    const [first, second] = server.seen;
    expect(second!.body.equals(first!.body)).toBe(true);
    expect(first!.body.length).toBeGreaterThan(0);
    expect(second!.headers['content-length']).toBe(first!.headers['content-length']);
    expect(second!.headers['content-type']).toBe(first!.headers['content-type']);
  });

  it('sends a stream above maximumReplayBytes once, whole, and refuses the retry saying why', async () => {
    const server = await serve(resetThenOk);
    const { http } = setup({ maximumReplayBytes: 16 });
    const payload = 'x'.repeat(40);
    const failure = await http(`${server.url}/upload`, {
      method: 'PUT',
      body: new Blob([payload]).stream(),
      duplex: 'half',
    } as RequestInit).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(BodyNotReplayableError);
    expect((failure as Error).message).toContain('not replayable');
    expect(((failure as Error).cause as TypeError).name).toBe('TypeError');
    expect(server.seen.map((r) => r.body.toString())).toEqual([payload]);
  });
});

describe('classification', () => {
  it('returns a 4xx answer untouched, sent once', async () => {
    const server = await serve((_n, _req, res) => answer(res, 404, { error: 'no such order' }));
    const { http } = setup();
    const response = await http(`${server.url}/orders/9`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'no such order' });
    expect(server.seen).toHaveLength(1);
  });

  it('returns the last failed answer when the attempts run out', async () => {
    const server = await serve((n, _req, res) => answer(res, 502, { n }));
    const { http } = setup();
    const response = await http(`${server.url}/x`);
    expect([response.status, await response.json(), server.seen.length]).toEqual([
      502,
      { n: 2 },
      3,
    ]);
  });

  it.each([
    ['delta-seconds on a 503', 503, '2', 2000],
    ['an HTTP-date on a 503', 503, new Date(1_800_000_003_000).toUTCString(), 3000],
    ['delta-seconds on a 429', 429, '1', 1000],
    ['garbage on a 503 (no hint: the backoff curve)', 503, '-1', 50],
    ['a fraction on a 429 (no hint: the throttled curve)', 429, '1.5', 500],
  ])('waits exactly what Retry-After asks: %s', async (_form, status, retryAfter, delay) => {
    const server = await serve((n, _req, res) =>
      n === 0 ? answer(res, status, {}, { 'retry-after': retryAfter }) : answer(res, 200),
    );
    const { events, http } = setup({ wallClock: () => 1_800_000_000_000 });
    expect((await http(`${server.url}/x`)).status).toBe(200);
    expect(events.filter((e) => e.kind === 'retrying').map((e) => [e.verdict, e.delay])).toEqual([
      [status === 429 || retryAfter !== '-1' ? 'Throttled' : 'Transient', delay],
    ]);
  });

  it('cancels a discarded failed response body before the retry is sent', async () => {
    const server = await serve((n, _req, res) => answer(res, n === 0 ? 500 : 200, { n }));
    const seen: Response[] = [];
    const usedWhenRetried: boolean[] = [];
    const { http } = setup({
      fetch: async (input, init) => {
        usedWhenRetried.push(...seen.map((r) => r.bodyUsed));
        const response = await fetch(input, init);
        seen.push(response);
        return response;
      },
    });
    const response = await http(`${server.url}/x`);
    expect(await response.json()).toEqual({ n: 1 });
    expect(usedWhenRetried).toEqual([true]);
  });
});

describe('headers stamped per attempt', () => {
  it('marks the first attempt of a retryable request only, and sends the remaining time of its bound on every attempt', async () => {
    const server = await serve((n, req, res) =>
      n < 2 ? reset(req) : answer(res, 200, { ok: true }),
    );
    const { http } = setup({}, { deadline: 5000 });
    await http(`${server.url}/x`, { headers: { 'x-nresilience-retrying': '1' } });
    expect(
      server.seen.map((r) => [
        r.headers['x-nresilience-retrying'],
        r.headers['x-nresilience-remaining-ms'],
      ]),
    ).toEqual([
      ['1', '5000'],
      [undefined, '4950'], // after the 50 ms backoff; a caller's own copy of the marker is removed too
      [undefined, '4850'], // after 100 ms more
    ]);
  });

  it('does not mark a POST it will not repeat, nor a single-attempt policy', async () => {
    const server = await serve(ok);
    await setup().http(`${server.url}/x`, { method: 'POST', body: 'b' });
    await setup({}, { attempts: 1 }).http(`${server.url}/x`);
    expect(server.seen.map((r) => r.headers['x-nresilience-retrying'])).toEqual([
      undefined,
      undefined,
    ]);
  });

  it('sends the caller time left when tighter, and the criticality when asked', async () => {
    const server = await serve(ok);
    const { clock, http } = setup({ propagateCriticality: true }, { deadline: 5000 });
    await Ambient.run({ remaining: 800, criticality: 'sheddable', clock }, () =>
      http(`${server.url}/x`),
    );
    await http(`${server.url}/x`);
    expect(
      server.seen.map((r) => [
        r.headers['x-nresilience-remaining-ms'],
        r.headers['x-nresilience-criticality'],
      ]),
    ).toEqual([
      ['800', 'sheddable'],
      ['5000', undefined],
    ]);
  });

  it('issues no request at all when the caller has no time left (useAmbientDeadline)', async () => {
    const server = await serve(ok);
    const { clock, http } = setup({}, { useAmbientDeadline: true });
    const failure = await Ambient.run({ remaining: 0, clock }, () => http(`${server.url}/x`)).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(DeadlineExceededError);
    expect(server.seen).toHaveLength(0);
  });
});

describe('per-host state', () => {
  it('a dead host opens its own breaker; a healthy host keeps answering', async () => {
    const dead = await serve((_n, req) => reset(req));
    const healthy = await serve(ok);
    const { clock, http } = setup(
      {},
      { breaker: Breaker.with({ consecutiveFailures: 3 }), attempts: 1 },
    );
    for (let i = 0; i < 3; i++) await http(`${dead.url}/x`).catch(() => undefined);
    const refusal = http(`${dead.url}/x`).catch((e: unknown) => e);
    await clock.advance(100); // the guarded pause
    const refused = await refusal;
    expect((refused as Error).name).toBe('CallRejectedError');
    expect(dead.seen).toHaveLength(3);
    expect((await http(`${healthy.url}/y`)).status).toBe(200);
    expect(http.hosts.unhealthy()).toEqual([new URL(dead.url).origin]);
    expect(http.hosts.entries().map((e) => [e.key, e.breaker?.state])).toEqual([
      [new URL(dead.url).origin, 'open'],
      [new URL(healthy.url).origin, 'closed'],
    ]);
  });

  it('holds at most maximumHosts hosts', async () => {
    const a = await serve(ok);
    const b = await serve(ok);
    const { http } = setup({ maximumHosts: 1 });
    await http(`${a.url}/x`);
    await http(`${b.url}/x`);
    expect(http.hosts.size).toBe(1);
    expect(http.hosts.entries().map((e) => e.key)).toEqual([new URL(b.url).origin]);
  });
});

describe('response bodies on the wire (real clock, short bounds)', () => {
  function realClock(
    extra: Partial<ResilientFetchOptions>,
    changes: Parameters<typeof Resilience.default.with>[0],
  ) {
    const policy = Resilience.default.with({
      name: 'wire',
      clock: SystemClock.instance,
      budget: RetryBudget.none,
      backoff: Backoff.none,
      ...changes,
    });
    return createResilientFetch({ policy, ...extra });
  }

  it('retries slow headers after the attempt timeout', async () => {
    const timers: NodeJS.Timeout[] = [];
    const server = await serve((n, _req, res) => {
      if (n === 0) timers.push(setTimeout(() => answer(res, 200, { late: true }), 2000));
      else answer(res, 200, { n });
    });
    const http = realClock({}, { attemptTimeout: 150 });
    const response = await http(`${server.url}/slow`);
    expect(await response.json()).toEqual({ n: 1 });
    expect(server.seen).toHaveLength(2);
    timers.forEach(clearTimeout);
  });

  it('fails a read of a body that goes silent with AttemptStalledError naming the bytes received', async () => {
    const server = await serve((_n, _req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('12345');
    });
    const http = realClock({ bodyGapTimeout: 150 }, {});
    const response = await http(`${server.url}/silent`);
    const failure = await response.text().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AttemptStalledError);
    expect((failure as AttemptStalledError).received).toBe(5);
    expect(server.seen).toHaveLength(1);
  });

  it('headers then silence: the first read fails with AttemptStalledError after the gap, 0 bytes received', async () => {
    const server = await serve((_n, _req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '20' });
      res.flushHeaders();
    });
    const { clock, http } = setup({ bodyGapTimeout: 300 });
    const response = await http(`${server.url}/silent`);
    expect(response.status).toBe(200);
    let settled = false;
    const reading = response
      .json()
      .catch((e: unknown) => e)
      .finally(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    await clock.advance(299);
    expect(settled).toBe(false);
    await clock.advance(1);
    const failure = await reading;
    expect(failure).toBeInstanceOf(AttemptStalledError);
    expect([(failure as AttemptStalledError).received, server.seen.length]).toEqual([0, 1]);
  });

  it.each([
    ['no gap bound', {}],
    ['a gap bound', { bodyGapTimeout: 300 }],
    ['resumeDownloads', { resumeDownloads: true }],
  ])(
    'a caller abort during a pending body read fails it with the abort reason at once, as fetch does (%s)',
    async (_case, extra) => {
      let closed!: () => void;
      const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
      const server = await serve((_n, req, res) => {
        res.writeHead(200, {
          'content-type': 'text/plain',
          'content-length': '20',
          etag: '"v1"',
          'accept-ranges': 'bytes',
        });
        res.write('first');
        req.socket.on('close', closed);
      });
      const { http } = setup(extra);
      const caller = new AbortController();
      const reader = (
        await http(`${server.url}/file`, { signal: caller.signal })
      ).body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toBe('first');
      const reading = reader.read().catch((e: unknown) => e);
      const reason = new Error('caller gave up');
      caller.abort(reason);
      expect(await reading).toBe(reason);
      // The connection is let go, not left open until the server ends the body.
      await connectionClosed;
      expect(server.seen).toHaveLength(1);
    },
  );

  it('a body read to its end leaves no listener on the caller signal', async () => {
    const server = await serve(ok);
    const { http } = setup({ bodyGapTimeout: 300 });
    const caller = new AbortController();
    const added: unknown[] = [];
    const removed: unknown[] = [];
    const { addEventListener, removeEventListener } = caller.signal;
    caller.signal.addEventListener = (...args: Parameters<typeof addEventListener>) => (
      added.push(args[1]),
      addEventListener.apply(caller.signal, args)
    );
    caller.signal.removeEventListener = (...args: Parameters<typeof removeEventListener>) => (
      removed.push(args[1]),
      removeEventListener.apply(caller.signal, args)
    );
    expect(await (await http(`${server.url}/x`, { signal: caller.signal })).json()).toEqual({
      ok: true,
    });
    expect(added.length).toBeGreaterThan(0);
    expect(added.filter((listener) => !removed.includes(listener))).toEqual([]);
  });

  it('a body reset mid-way fails the read with the network error when it is neither buffered nor resumed', async () => {
    let resetBody: () => void = () => undefined;
    const server = await serve((_n, req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '10' });
      res.write('01234');
      resetBody = () => reset(req);
    });
    const http = realClock({}, {});
    const response = await http(`${server.url}/body`);
    const reader = response.body!.getReader();
    expect(Buffer.from((await reader.read()).value!).toString()).toBe('01234');
    resetBody();
    const failure = await reader.read().catch((e: unknown) => e);
    expect((failure as Error).name).toBe('TypeError');
    expect(server.seen).toHaveLength(1);
  });

  it('does not take a slow consumer for a stalled server', async () => {
    const server = await serve((_n, _req, res) => answer(res, 200, { fine: true }));
    const http = realClock({ bodyGapTimeout: 50 }, {});
    const response = await http(`${server.url}/x`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await response.json()).toEqual({ fine: true });
  });

  it('retries a body broken mid-way when bufferResponses is on', async () => {
    const server = await serve((n, req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '10' });
      if (n === 0) {
        res.write('01234');
        setImmediate(() => reset(req));
      } else res.end('0123456789');
    });
    const http = realClock({ bufferResponses: true }, {});
    const response = await http(`${server.url}/body`);
    expect(await response.text()).toBe('0123456789');
    expect(server.seen).toHaveLength(2);
  });

  it('passes HEAD and a caller Range request through unchanged, whatever the server does with the range', async () => {
    const server = await serve((_n, req, res) =>
      answer(res, 200, { range: req.headers.range ?? null }),
    );
    const http = realClock({ bodyGapTimeout: 1000 }, {});
    const head = await http(`${server.url}/file`, { method: 'HEAD' });
    expect([head.status, head.body]).toEqual([200, null]);
    const ranged = await http(`${server.url}/file`, { headers: { range: 'bytes=5-' } });
    expect([ranged.status, await ranged.json()]).toEqual([200, { range: 'bytes=5-' }]);
  });
});

describe('published quota', () => {
  it.each([
    [
      'RateLimit structured fields',
      { 'ratelimit-policy': '"default";q=10;w=60', ratelimit: '"default";r=1;t=30' },
      30_000,
    ],
    [
      'X-RateLimit triple with an epoch reset',
      {
        'x-ratelimit-limit': '100',
        'x-ratelimit-remaining': '5',
        'x-ratelimit-reset': '1800000045',
      },
      45_000,
    ],
    [
      'the draft-07 dictionary',
      { 'ratelimit-policy': '10;w=60', ratelimit: 'limit=10, remaining=0, reset=20' },
      20_000,
    ],
    [
      'the draft-06 RateLimit-* triple',
      { 'ratelimit-limit': '100', 'ratelimit-remaining': '9', 'ratelimit-reset': '15' },
      15_000,
    ],
  ])('refuses locally inside the reserve: %s', async (_shape, headers, wait) => {
    const server = await serve((_n, _req, res) => answer(res, 200, {}, headers));
    const { clock, events, http, policy } = setup(
      { wallClock: () => 1_800_000_000_000 },
      { breaker: Breaker.default },
    );
    expect((await http(`${server.url}/x`)).status).toBe(200);
    events.length = 0;
    let settled = false;
    const call = http(`${server.url}/x`)
      .catch((e: unknown) => e)
      .finally(() => (settled = true));
    // The executor's one refusal path: the 100 ms guarded pause first, the request never sent.
    await clock.advance(99);
    expect(settled).toBe(false);
    await clock.advance(1);
    const failure = (await call) as CallRejectedError;
    expect([failure.name, failure.reason, failure.retryAfter]).toEqual([
      'CallRejectedError',
      'QuotaExhausted',
      wait - 100,
    ]);
    expect(server.seen).toHaveLength(1);
    expect(events.map((e) => [e.kind, e.attempt, e.verdict, e.reason, e.delay])).toEqual([
      ['rejectedByQuota', 1, 'Limited', undefined, wait - 100],
      ['rejected', 0, undefined, 'limited', 0],
    ]);
    expect(http.hosts.entries()[0]!.breaker!.consecutiveFailures).toBe(0);
    expect(policy.bucket()).toBeUndefined();
    // After the window resets, calls go again.
    await clock.advance(wait);
    expect((await http(`${server.url}/x`)).status).toBe(200);
  });

  it('reads a RateLimit list split over several header lines', async () => {
    const server = await serve((_n, _req, res) => {
      res.setHeader('RateLimit', ['"hour";r=500;t=3000', '"second";r=0;t=2']);
      answer(res, 200);
    });
    const { clock, http } = setup();
    await http(`${server.url}/x`);
    const call = http(`${server.url}/x`).catch((e: unknown) => e);
    await clock.advance(100);
    expect(((await call) as CallRejectedError).retryAfter).toBe(1900);
  });

  it.each([
    ['RateLimit-Policy alone (informative)', { 'ratelimit-policy': '"default";q=10;w=60' }],
    ['malformed RateLimit', { ratelimit: '"default";r=abc;t=30, ;;;, "x";r=-1;t=5' }],
    ['malformed X-RateLimit', { 'x-ratelimit-remaining': 'none', 'x-ratelimit-reset': 'soon' }],
    ['a RateLimit reset a million years ahead', { ratelimit: '"d";r=0;t=999999999999999' }],
    [
      'an X-RateLimit-Reset epoch in ms',
      { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1800000045000' },
    ],
    ['a draft-07 reset of more than a day', { ratelimit: 'limit=10, remaining=0, reset=86401' }],
    [
      'a malformed draft-07 dictionary',
      { ratelimit: 'limit=10, remaining=-1, reset=5, =, remaining' },
    ],
  ])('never refuses on %s and never throws', async (_case, headers) => {
    const server = await serve((_n, _req, res) => answer(res, 200, {}, headers));
    const { http } = setup();
    for (let i = 0; i < 3; i++) expect((await http(`${server.url}/x`)).status).toBe(200);
    expect(server.seen).toHaveLength(3);
  });

  it('beside a rate limit, whichever is tighter refuses: the published quota first, then the rate', async () => {
    const generous = {
      'x-ratelimit-limit': '1000',
      'x-ratelimit-remaining': '900',
      'x-ratelimit-reset': '60',
    };
    const spent = {
      'x-ratelimit-limit': '1000',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '60',
    };
    const server = await serve((_n, req, res) =>
      answer(res, 200, {}, req.url === '/spent' ? spent : generous),
    );
    // The rate allows 100 at once: the quota the host published (none left) is the tighter.
    const loose = setup({}, { limit: Limit.rate({ limit: 100, per: 1000 }) });
    expect((await loose.http(`${server.url}/spent`)).status).toBe(200);
    const byQuota = loose.http(`${server.url}/spent`).catch((e: unknown) => e);
    await loose.clock.advance(100);
    expect(((await byQuota) as CallRejectedError).reason).toBe('QuotaExhausted');
    // One per second: the rate is the tighter, the host's 900 left do not matter; the request is never sent.
    const tight = setup({}, { limit: Limit.rate({ limit: 1, per: 1000 }) });
    expect((await tight.http(`${server.url}/x`)).status).toBe(200);
    const byRate = tight.http(`${server.url}/x`).catch((e: unknown) => e);
    await tight.clock.advance(100);
    const refused = (await byRate) as CallRejectedError;
    expect([refused.name, refused.reason, refused.retryAfter]).toEqual([
      'CallRejectedError',
      'Limited',
      900,
    ]);
    expect(server.seen.map((r) => r.url)).toEqual(['/spent', '/x']);
  });

  it('reads no headers with quota: false', async () => {
    const server = await serve((_n, _req, res) =>
      answer(res, 200, {}, { ratelimit: '"d";r=0;t=30' }),
    );
    const { http } = setup({ quota: false });
    await http(`${server.url}/x`);
    expect((await http(`${server.url}/x`)).status).toBe(200);
  });
});

describe('createResilientFetch options', () => {
  it('says the field, the value and the rule of a bad bound', () => {
    const create = (options: Partial<ResilientFetchOptions>) => () =>
      createResilientFetch({ policy: Resilience.default, ...options });
    expect(create({ maximumHosts: 0 })).toThrow(
      'maximumHosts: 0 is invalid: must be an integer >= 1 (the most hosts with their own state), at most 1000000',
    );
    expect(create({ maximumHosts: 2_000_000 })).toThrow(
      'maximumHosts: 2000000 is invalid: must be an integer >= 1 (the most hosts with their own state), at most 1000000',
    );
    expect(create({ maximumReplayBytes: -1 })).toThrow(
      'maximumReplayBytes: -1 is invalid: must be an integer >= 0 (bytes)',
    );
    expect(create({ maximumReplayBytes: null as never })).toThrow(
      'maximumReplayBytes: null is invalid: must be an integer >= 0 (bytes)',
    );
    expect(create({ bodyGapTimeout: 0 })).toThrow(
      'bodyGapTimeout: 0 is invalid: must be a duration in ms > 0 (or Infinity)',
    );
    expect(create({ bodyGapTimeout: Number.NaN })).toThrow(
      'bodyGapTimeout: NaN is invalid: must be a duration in ms > 0 (or Infinity)',
    );
    expect(typeof create({ bodyGapTimeout: Infinity })()).toBe('function');
  });
});
