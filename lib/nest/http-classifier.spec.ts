/** Classifier.http judged against the Nest and axios errors apps throw (kept beside the Nest layer: lib/core imports nothing from @nestjs). */
import { HttpException, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
import { AxiosError, AxiosHeaders } from 'axios';
import {
  Classifier,
  FakeClock,
  httpFactsOfError,
  httpStatusMeaning,
  httpVerdict,
  Resilience,
  retryAfterHeader,
  Verdict,
} from '../core/index.js';

const context = { callerAborted: false };
const value = (v: unknown) => Classifier.http.classifyValue(v, context);
const error = (e: unknown) => Classifier.http.classifyError(e, context);
const response = (status: number, headers: Record<string, string> = {}) =>
  new Response(status === 204 || status === 304 ? null : 'body', { status, headers });

/** An axios error as axios builds it for a response with `status` and `headers`. */
function axiosError(status: number, headers: Record<string, string> = {}): AxiosError {
  const config = { headers: new AxiosHeaders() };
  return new AxiosError(
    `Request failed with status code ${status}`,
    'ERR_BAD_RESPONSE',
    config,
    {},
    {
      status,
      statusText: '',
      headers: new AxiosHeaders(headers),
      config,
      data: {},
    },
  );
}

describe('Classifier.http', () => {
  it('reads a fetch Response: 2xx/3xx Ok, 5xx and 408 Transient, other 4xx an answer (Permanent)', () => {
    expect(value(response(200))).toBe(Verdict.ok);
    expect(value(response(204))).toBe(Verdict.ok);
    expect(value(response(304))).toBe(Verdict.ok);
    for (const status of [500, 502, 504, 408, 507])
      expect([status, value(response(status)).kind]).toEqual([status, 'Transient']);
    for (const status of [400, 401, 403, 404, 409, 422, 501, 505])
      expect([status, value(response(status)).kind]).toEqual([status, 'Permanent']);
  });

  it('gives 429 and 503-with-Retry-After the hint in ms, 503 without it Transient', () => {
    expect(value(response(429, { 'Retry-After': '3' }))).toEqual({
      kind: 'Throttled',
      retryAfter: 3000,
    });
    expect(value(response(503, { 'Retry-After': '120' }))).toEqual({
      kind: 'Throttled',
      retryAfter: 120_000,
    });
    expect(value(response(429))).toEqual({ kind: 'Throttled' });
    expect(value(response(503))).toBe(Verdict.transient);
  });

  it('ignores a malformed Retry-After: 429 keeps no hint, 503 is Transient', () => {
    for (const bad of ['-1', '1.5', 'soon', '']) {
      expect(value(response(429, { 'Retry-After': bad }))).toEqual({ kind: 'Throttled' });
      expect(value(response(503, { 'Retry-After': bad }))).toBe(Verdict.transient);
    }
  });

  it('parses an HTTP-date hint against the wall clock it is given', () => {
    const now = Date.parse('Tue, 01 Dec 2026 09:00:00 GMT');
    const verdict = httpVerdict(
      { status: 503, headers: new Headers({ 'retry-after': 'Tue, 01 Dec 2026 09:00:07 GMT' }) },
      () => now,
    );
    expect(verdict).toEqual({ kind: 'Throttled', retryAfter: 7000 });
    expect(
      httpVerdict(
        { status: 429, headers: { 'Retry-After': 'Tue, 01 Dec 2026 08:00:00 GMT' } },
        () => now,
      ),
    ).toEqual({ kind: 'Throttled' }); // a date already past: no hint, the backoff applies
  });

  it('reads errors of axios (response.status + AxiosHeaders), got (response.statusCode), Nest (getStatus) and plain status fields', () => {
    expect(error(axiosError(404))).toBe(Verdict.permanent);
    expect(error(axiosError(502))).toBe(Verdict.transient);
    expect(error(axiosError(503, { 'Retry-After': '2' }))).toEqual({
      kind: 'Throttled',
      retryAfter: 2000,
    });
    const got = Object.assign(new Error('Response code 429'), {
      name: 'HTTPError',
      response: { statusCode: 429, headers: { 'retry-after': '4' } },
    });
    expect(error(got)).toEqual({ kind: 'Throttled', retryAfter: 4000 });
    expect(error(new NotFoundException())).toBe(Verdict.permanent);
    expect(error(new HttpException('teapot', 418))).toBe(Verdict.permanent);
    expect(error(new HttpException('timeout', 408))).toBe(Verdict.transient);
    expect(error(new ServiceUnavailableException())).toBe(Verdict.transient);
    expect(error(Object.assign(new Error('x'), { status: 500 }))).toBe(Verdict.transient);
    expect(error(Object.assign(new Error('x'), { statusCode: 400 }))).toBe(Verdict.permanent);
    expect(
      error(Object.assign(new Error('x'), { status: 503, headers: { 'retry-after': '1' } })),
    ).toEqual({ kind: 'Throttled', retryAfter: 1000 });
  });

  it('never judges a thrown error Ok: a 3xx the client rejected is an answer, a 2xx (a body broken after the headers) falls to the default rules', () => {
    expect(error(axiosError(304))).toBe(Verdict.permanent);
    expect(error(axiosError(302))).toBe(Verdict.permanent);
    // axios rejects a body aborted mid-way with the 200 response attached.
    expect(error(axiosError(200))).toBe(Verdict.transient);
    expect(error(Object.assign(new TypeError('terminated'), { status: 200 }))).toBe(
      Verdict.permanent,
    );
    expect(value(response(200))).toBe(Verdict.ok);
  });

  it('leaves what carries no status to the default rules: network errors Transient, bugs Permanent', () => {
    const fetchFailed = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    });
    expect(error(fetchFailed)).toBe(Verdict.transient);
    expect(error(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).toBe(
      Verdict.transient,
    );
    expect(error(new TypeError('x is not a function'))).toBe(Verdict.permanent);
    expect(error(Object.assign(new Error('odd'), { status: 'broken' }))).toBe(Verdict.transient);
    expect(error(Object.assign(new Error('odd'), { status: 999 }))).toBe(Verdict.transient);
  });

  it('treats only response-shaped values as responses: a domain object with a status is Ok', () => {
    expect(value({ status: 500 })).toBe(Verdict.ok);
    expect(value({ status: 404, headers: {} })).toBe(Verdict.permanent);
    expect(value({ statusCode: 503, headers: { 'retry-after': '5' } })).toEqual({
      kind: 'Throttled',
      retryAfter: 5000,
    });
    expect(value('text')).toBe(Verdict.ok);
    expect(value(null)).toBe(Verdict.ok);
  });

  it('survives hostile objects: a throwing getStatus or headers.get gives no status or no hint', () => {
    const hostile = {
      getStatus: () => {
        throw new Error('no');
      },
    };
    expect(httpFactsOfError(hostile)).toBeUndefined();
    expect(
      retryAfterHeader({
        get: () => {
          throw new Error('no');
        },
        'Retry-After': '9',
      }),
    ).toBe('9');
    expect(retryAfterHeader({ 'retry-after': ['7', '8'] })).toBe('7');
    expect(retryAfterHeader(undefined)).toBeUndefined();
  });

  it('names every status the same way as the classification (httpStatusMeaning)', () => {
    expect(
      [200, 301, 408, 429, 500, 501, 503, 404].map((s) => httpStatusMeaning(s, false)),
    ).toEqual(['ok', 'ok', 'transient', 'throttled', 'transient', 'answer', 'transient', 'answer']);
    expect(httpStatusMeaning(503, true)).toBe('throttled');
  });

  it('composes: a rule given with `with` is tried first, the HTTP rule then decides', () => {
    class StaleCacheError extends Error {}
    const custom = Classifier.http.with(
      Classifier.when(StaleCacheError, Verdict.permanent),
      (outcome) =>
        !outcome.ok && outcome.error instanceof NotFoundException ? Verdict.transient : undefined,
    );
    expect(custom.classifyError(new NotFoundException(), context)).toBe(Verdict.transient);
    expect(
      custom.classifyError(Object.assign(new StaleCacheError('x'), { status: 503 }), context),
    ).toBe(Verdict.permanent);
    expect(custom.classifyError(new HttpException('x', 409), context)).toBe(Verdict.permanent);
    expect(custom.classifyError(new HttpException('x', 500), context)).toBe(Verdict.transient);
  });
});

describe('Resilience.http with Classifier.http', () => {
  it('does not retry a 404 and returns the response; retries a 502 and honours a 503 Retry-After exactly', async () => {
    const clock = new FakeClock();
    const policy = Resilience.http.with({ clock, random: () => 0.5 });
    let calls = 0;
    const notFound = await policy.tryRun(() => {
      calls++;
      return response(404);
    });
    expect([calls, notFound.reason, notFound.ok, (notFound.value as Response).status]).toEqual([
      1,
      'permanent',
      false,
      404,
    ]);

    const script = [response(503, { 'Retry-After': '2' }), response(502), response(200)];
    const times: number[] = [];
    const pending = policy.tryRun(() => {
      times.push(clock.now());
      return script.shift()!;
    });
    await clock.advance(2000);
    await clock.advance(1000);
    const result = await pending;
    expect(result.reason).toBe('succeeded');
    expect(result.attempts.map((a) => a.verdict)).toEqual(['Throttled', 'Transient', 'Ok']);
    // Pushback replaces the curve exactly (2000 ms); after it the curve starts again from the first
    // retry's delay (gRFC A6), so the 502 waits what the curve gives a first retry.
    const curve = policy.options.backoff.compute({
      attempt: 2,
      verdict: Verdict.transient,
      error: undefined,
      remaining: Infinity,
      signal: undefined,
      random: () => 0.5,
    });
    expect(curve).toBeGreaterThan(0);
    expect(times.map((t) => t - times[0]!)).toEqual([0, 2000, 2000 + curve]);
  });

  it('never counts a 404 as breaker evidence: 20 answers in a row leave the breaker closed', async () => {
    const policy = Resilience.http.with({ clock: new FakeClock() });
    for (let i = 0; i < 20; i++) await policy.tryRun(() => Promise.reject(new NotFoundException()));
    expect(policy.breaker()!.state).toBe('closed');
    expect(policy.breaker()!.snapshot().consecutiveFailures).toBe(0);
  });
});
