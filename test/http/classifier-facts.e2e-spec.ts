import { describe, expect, it } from '@jest/globals';
import {
  Ambient,
  Backoff,
  Classifier,
  FakeClock,
  Resilience,
  RetryBudget,
  Verdict,
} from '../../lib/core/index.js';
import {
  CallFacts,
  NotRepeatableError,
  createResilientFetch,
  markRepeatable,
} from '../../lib/http/index.js';
import { ScriptedFetch } from '../../lib/testing/index.js';

/** Three attempts, no backoff, no budget, on a test clock; `extra` adds to it (a classifier). */
function threeAttempts(extra: Parameters<typeof Resilience.default.with>[0] = {}) {
  return Resilience.default.with({
    attempts: 3,
    backoff: Backoff.none,
    budget: RetryBudget.none,
    clock: new FakeClock(),
    ...extra,
  });
}

/**
 * A resilient fetch over a dependency that answers 500 twice, then 200, whose policy's own
 * classifier (it judges values, so the hosts use it as it is) records the facts of every attempt.
 */
function setup() {
  const seen: unknown[] = [];
  const transport = new ScriptedFetch().responds(500, { times: 2 }).responds(200);
  const http = createResilientFetch({
    fetch: transport.fetch,
    quota: false,
    policy: threeAttempts({
      classifier: Classifier.of((outcome, context) => {
        seen.push(context.facts);
        return outcome.ok && (outcome.value as Response).status >= 500
          ? Verdict.transient
          : undefined;
      }),
    }),
  });
  return { http, seen, transport };
}

describe("a request's facts reach its policy's classifier (ClassifyContext.facts)", () => {
  it('a GET: one CallFacts, repeatable, at every attempt', async () => {
    const { http, seen, transport } = setup();
    expect((await http('https://api.test/orders')).status).toBe(200);
    expect(transport.callCount).toBe(3);
    expect(seen.map((facts) => facts instanceof CallFacts && facts.repeatable)).toEqual([
      true,
      true,
      true,
    ]);
    expect(new Set(seen).size).toBe(1);
  });

  it('a POST without a key: repeatable false, its 500 final after one send', async () => {
    const { http, seen, transport } = setup();
    const response = await http('https://api.test/orders', { method: 'POST', body: 'b' });
    expect([response.status, transport.callCount]).toEqual([500, 1]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(CallFacts);
    expect((seen[0] as CallFacts).repeatable).toBe(false);
    expect((seen[0] as CallFacts).stoppedAsNotRepeatable(response)).toBe(true);
  });

  it('a keyed POST: repeatable, retried to its 200', async () => {
    const { http, seen, transport } = setup();
    const response = await http(
      'https://api.test/orders',
      markRepeatable({ method: 'POST', body: 'b' }, 'k-1'),
    );
    expect([response.status, transport.callCount]).toEqual([200, 3]);
    expect(seen.map((facts) => (facts as CallFacts).repeatable)).toEqual([true, true, true]);
  });

  // A failure that is not an object (a custom fetch throwing a string) cannot be keyed by anything:
  // the facts travel with the call, so the not-repeatable rule holds for it as for any other failure.
  it('a thrown string: a POST sent once and NotRepeatableError with it as cause, a GET retried', async () => {
    const sends: string[] = [];
    const http = createResilientFetch({
      fetch: async (input, init) => {
        sends.push(init?.method ?? 'GET');
        if (sends.length % 2 === 1) throw 'socket hang up';
        return new Response('ok', { status: 200 });
      },
      quota: false,
      policy: threeAttempts(),
    });
    const post = await http('https://api.test/orders', { method: 'POST', body: 'b' }).catch(
      (error: unknown) => error,
    );
    expect(post).toBeInstanceOf(NotRepeatableError);
    expect((post as NotRepeatableError).cause).toBe('socket hang up');
    expect(sends).toEqual(['POST']);
    sends.length = 0;
    expect((await http('https://api.test/orders')).status).toBe(200);
    expect(sends).toEqual(['GET', 'GET']);
  });

  it('in a single-shot scope a POST that failed once rejects with its own error: no retry was withheld', async () => {
    let sends = 0;
    const reset = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } });
    const http = createResilientFetch({
      fetch: async () => {
        sends++;
        throw reset;
      },
      quota: false,
      policy: threeAttempts(),
    });
    const post = () => http('https://api.test/orders', { method: 'POST', body: 'b' });
    await expect(Ambient.singleShot(post)).rejects.toBe(reset);
    await expect(post()).rejects.toBeInstanceOf(NotRepeatableError);
    expect(sends).toBe(2);
  });
});
