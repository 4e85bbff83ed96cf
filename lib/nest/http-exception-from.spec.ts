import { describe, expect, it } from '@jest/globals';
import { HttpException } from '@nestjs/common';
import { Backoff, Classifier, FakeClock, Resilience, RetryBudget } from '../core/index.js';
import { httpExceptionFrom } from './http-exception-from.js';
import { httpExceptionRule } from './http-exception.rule.js';

const context = { callerAborted: false };
const verdictOf = (error: unknown) => httpExceptionRule({ ok: false, error }, context as never);

describe('httpExceptionFrom', () => {
  it('keeps the status and the Retry-After of the Response, so a 503 waits what the dependency asked', () => {
    const exception = httpExceptionFrom(
      new Response(null, { status: 503, headers: { 'Retry-After': '1' } }),
      'payments answered 503',
    );
    expect([exception.getStatus(), exception.getResponse()]).toEqual([
      503,
      { statusCode: 503, message: 'payments answered 503' },
    ]);
    expect(verdictOf(exception)).toEqual({ kind: 'Throttled', retryAfter: 1000 });
    // The pattern it replaces: an HttpException of its own carries no hint.
    expect(verdictOf(new HttpException('payments answered 503', 503))?.kind).toBe('Transient');
    expect(verdictOf(httpExceptionFrom(new Response(null, { status: 404 })))?.kind).toBe(
      'Permanent',
    );
    expect(
      verdictOf(
        httpExceptionFrom(new Response(null, { status: 503, headers: { 'Retry-After': 'soon' } })),
      )?.kind,
    ).toBe('Transient');
  });

  it('a policy retries a thrown 503 with Retry-After: 1 after exactly 1000 ms, not its backoff', async () => {
    const clock = new FakeClock();
    const delays: number[] = [];
    const policy = Resilience.default
      .with({
        clock,
        attempts: 3,
        budget: RetryBudget.none,
        backoff: Backoff.exponential({ transientBase: 50 }),
        classifier: Classifier.of(httpExceptionRule),
      })
      .withListener((event) => {
        if (event.kind === 'retrying') delays.push(event.delay);
      });
    let calls = 0;
    const call = policy.run(() => {
      if (++calls === 1)
        throw httpExceptionFrom(
          new Response(null, { status: 503, headers: { 'Retry-After': '1' } }),
        );
      return 'charged';
    });
    await clock.runAll();
    expect([await call, calls, delays]).toEqual(['charged', 2, [1000]]);
  });
});
