import { afterEach, describe, expect, it } from '@jest/globals';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type CallEvent, Resilience, RetryBudget } from '../../lib/core/index.js';
import {
  createResilientFetch,
  ResumeRefusedError,
  type ResilientFetchOptions,
} from '../../lib/http/index.js';
import { loopbackServers, reset } from '../support/loopback-server.js';
import { type PolicyChanges, jumpingPolicy } from '../support/jumping-policy.js';

const { serve, closeAll } = loopbackServers();
afterEach(closeAll);

/** 10 000 bytes that differ from their neighbours, so a splice at the wrong offset shows. */
const CONTENT = Buffer.from(Array.from({ length: 10_000 }, (_, i) => (i * 7) % 251));
const FIRST_PART = 4000;

/** How the first answer's body breaks once the caller has read the first 4000 bytes. */
type Break = 'reset' | 'close' | 'stall';

interface Download {
  /** Headers of the first answer (a 200): a strong ETag and Accept-Ranges: bytes unless changed. */
  readonly first?: Record<string, string>;
  /** What the server does with a request carrying Range: answer the range (default), or misbehave. */
  readonly onRange?: (req: IncomingMessage, res: ServerResponse, start: number) => void;
}

/**
 * A file server that sends the first 4000 bytes of a 200, then waits for `breakBody()` (called by
 * the test once the caller has read them) to break the connection; a request with `Range: bytes=N-`
 * whose `If-Range` matches gets the 206 from byte N.
 */
async function fileServer(how: Break, download: Download = {}) {
  let breakBody: () => void = () => undefined;
  const server = await serve((n, req, res) => {
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (n > 0 && range !== null) {
      const start = Number(range[1]);
      if (download.onRange !== undefined) return download.onRange(req, res, start);
      res.writeHead(206, {
        etag: '"v1"',
        'content-range': `bytes ${start}-${CONTENT.length - 1}/${CONTENT.length}`,
        'content-length': CONTENT.length - start,
      });
      return res.end(CONTENT.subarray(start));
    }
    res.writeHead(200, {
      etag: '"v1"',
      'accept-ranges': 'bytes',
      'content-length': CONTENT.length,
      'content-type': 'application/octet-stream',
      ...download.first,
    });
    res.write(CONTENT.subarray(0, FIRST_PART));
    breakBody = () =>
      how === 'reset' ? reset(req) : how === 'close' ? req.socket.destroy() : undefined;
  });
  return { server, breakBody: () => breakBody() };
}

/** Reads `response`'s body to its end or its error, calling `atFirstPart` once 4000 bytes are in. */
async function read(
  response: Response,
  atFirstPart: () => void | Promise<void>,
): Promise<{ bytes: Buffer; error?: unknown }> {
  const reader = response.body!.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let told = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes: Buffer.concat(chunks) };
      chunks.push(value);
      total += value.byteLength;
      if (!told && total >= FIRST_PART) {
        told = true;
        await atFirstPart();
      }
    }
  } catch (error) {
    return { bytes: Buffer.concat(chunks), error };
  }
}

/** A resilient fetch with resumeDownloads under {@link jumpingPolicy} (backoffs jump at once). */
function setup(extra: Partial<ResilientFetchOptions> = {}, changes: PolicyChanges = {}) {
  const { clock, events, policy } = jumpingPolicy('files', changes);
  return { clock, events, http: createResilientFetch({ policy, resumeDownloads: true, ...extra }) };
}

describe('resumeDownloads: a body that breaks after bytes were delivered carries on with Range + If-Range', () => {
  it.each(['reset', 'close'] as const)(
    'connection %s mid-body: the caller reads the whole content byte for byte',
    async (how) => {
      const { server, breakBody } = await fileServer(how);
      const { events, http } = setup();
      const response = await http(`${server.url}/file.bin`);
      const { bytes, error } = await read(response, breakBody);
      expect(error).toBeUndefined();
      expect(bytes.equals(CONTENT)).toBe(true);
      expect(server.seen.map((r) => [r.headers.range, r.headers['if-range']])).toEqual([
        [undefined, undefined],
        ['bytes=4000-', '"v1"'],
      ]);
      // The resume is attempt 2 of the call: after the backoff, with the retry's events; the one
      // terminal event comes when the body is done.
      expect(events.map((e) => [e.kind, e.attempt, e.verdict, e.delay])).toEqual([
        ['attempt', 1, 'Ok', 0],
        ['retrying', 1, 'Transient', 50],
        ['attempt', 2, 'Ok', 0],
        ['streamResumed', 2, 'Ok', 0],
        ['succeeded', 2, 'Ok', 0],
      ]);
    },
  );

  it('a body that stalls (headers and 4000 bytes, then silence) resumes after the gap bound', async () => {
    const { server } = await fileServer('stall');
    const { clock, http } = setup({ bodyGapTimeout: 500 });
    const response = await http(`${server.url}/file.bin`);
    // Once the first part is in, the next read waits on a silent server: 500 ms of policy time stalls it.
    const { bytes, error } = await read(
      response,
      () => void setImmediate(() => void clock.advance(500)),
    );
    expect(error).toBeUndefined();
    expect(bytes.equals(CONTENT)).toBe(true);
    expect(server.seen.map((r) => r.headers.range)).toEqual([undefined, 'bytes=4000-']);
  });

  it('headers then silence: nothing delivered, the resume asks from byte 0', async () => {
    const server = await serve((n, _req, res) => {
      if (n === 0) {
        res.writeHead(200, {
          etag: '"v1"',
          'accept-ranges': 'bytes',
          'content-length': CONTENT.length,
        });
        res.flushHeaders();
        return;
      }
      res.writeHead(206, {
        etag: '"v1"',
        'content-range': `bytes 0-${CONTENT.length - 1}/${CONTENT.length}`,
        'content-length': CONTENT.length,
      });
      res.end(CONTENT);
    });
    const { clock, http } = setup({ bodyGapTimeout: 500 });
    const response = await http(`${server.url}/file.bin`);
    const pending = response.arrayBuffer();
    await new Promise((resolve) => setImmediate(resolve));
    await clock.advance(500);
    expect(Buffer.from(await pending).equals(CONTENT)).toBe(true);
    expect(server.seen.map((r) => r.headers.range)).toEqual([undefined, 'bytes=0-']);
  });
});

describe('resumeDownloads refuses to splice', () => {
  async function refusal(download: Download) {
    const { server, breakBody } = await fileServer('close', download);
    const { http } = setup();
    const { bytes, error } = await read(await http(`${server.url}/file.bin`), breakBody);
    // Never a byte that does not belong where it is: the caller has exactly the first part.
    expect(bytes.equals(CONTENT.subarray(0, FIRST_PART))).toBe(true);
    expect(error).toBeInstanceOf(ResumeRefusedError);
    const refused = error as ResumeRefusedError;
    expect(refused.delivered).toBe(FIRST_PART);
    expect((refused.cause as Error).name).toBe('TypeError');
    return { refused, seen: server.seen };
  }

  it('a Range-ignoring server (200 with the whole body again)', async () => {
    const { refused, seen } = await refusal({
      onRange: (_req, res) => {
        res.writeHead(200, { etag: '"v1"', 'content-length': CONTENT.length });
        res.end(CONTENT);
      },
    });
    expect([refused.reason, refused.message]).toEqual([
      'rangeIgnored',
      'the download broke after 4000 bytes were delivered and was not resumed: the server answered 200 to Range: bytes=4000- (it ignores ranges): the whole body again cannot be appended',
    ]);
    expect(seen.map((r) => r.headers.range)).toEqual([undefined, 'bytes=4000-']);
  });

  it('a weak ETag: no resume request is sent', async () => {
    const { refused, seen } = await refusal({ first: { etag: 'W/"v1"' } });
    expect([refused.reason, refused.message]).toEqual([
      'weakETag',
      'the download broke after 4000 bytes were delivered and was not resumed: the first answer\'s ETag W/"v1" is weak (If-Range needs a strong validator, RFC 9110 §13.1.5)',
    ]);
    expect(seen).toHaveLength(1);
  });

  it('no Accept-Ranges: no resume request is sent', async () => {
    const { refused, seen } = await refusal({ first: { 'accept-ranges': 'none' } });
    expect([refused.reason, refused.message]).toEqual([
      'noAcceptRanges',
      'the download broke after 4000 bytes were delivered and was not resumed: the first answer did not send Accept-Ranges: bytes (it sent none)',
    ]);
    expect(seen).toHaveLength(1);
  });

  it('an ETag that changed (the server answers If-Range with the new representation)', async () => {
    const { refused, seen } = await refusal({
      onRange: (req, res) => {
        expect(req.headers['if-range']).toBe('"v1"');
        res.writeHead(200, { etag: '"v2"', 'content-length': 3 });
        res.end('new');
      },
    });
    expect([refused.reason, refused.message]).toEqual([
      'changed',
      'the download broke after 4000 bytes were delivered and was not resumed: the representation changed (ETag "v1", now "v2"; answered 200)',
    ]);
    expect(seen).toHaveLength(2);
  });

  it('a 206 that starts at another offset', async () => {
    const { refused } = await refusal({
      onRange: (_req, res) => {
        res.writeHead(206, {
          etag: '"v1"',
          'content-range': `bytes 0-${CONTENT.length - 1}/${CONTENT.length}`,
          'content-length': CONTENT.length,
        });
        res.end(CONTENT);
      },
    });
    expect([refused.reason, refused.message]).toEqual([
      'wrongRange',
      'the download broke after 4000 bytes were delivered and was not resumed: the server answered 206 with Content-Range: bytes 0-9999/10000 to Range: bytes=4000-, not starting at byte 4000',
    ]);
  });

  it('a 206 whose total length differs from the first answer', async () => {
    const { refused } = await refusal({
      onRange: (_req, res) => {
        res.writeHead(206, {
          etag: '"v1"',
          'content-range': 'bytes 4000-11999/12000',
          'content-length': 8000,
        });
        res.end(Buffer.alloc(8000));
      },
    });
    expect(refused.reason).toBe('wrongRange');
    expect(refused.message).toContain("a length other than the first answer's 10000");
  });
});

describe('a resume is an attempt of the same call', () => {
  it('with no attempt left, the read fails with what broke the body', async () => {
    const { server, breakBody } = await fileServer('close');
    const { http } = setup({}, { attempts: 1 });
    const { bytes, error } = await read(await http(`${server.url}/file.bin`), breakBody);
    expect(bytes.equals(CONTENT.subarray(0, FIRST_PART))).toBe(true);
    expect((error as Error).name).toBe('TypeError');
    expect(server.seen).toHaveLength(1);
  });

  it('spends a retry-budget token, and an empty budget refuses it', async () => {
    const budget = RetryBudget.of({ fraction: 0, minimumPerSecond: 0 });
    const { server, breakBody } = await fileServer('close');
    const { clock, http } = setup({}, { budget });
    const response = await http(`${server.url}/file.bin`);
    const bucket = budget.resolve(http.hosts.for(new URL(server.url).origin), clock)!;
    while (bucket.tryAcquire());
    const { error } = await read(response, async () => {
      breakBody();
      // The refusal comes after the guarded 100 ms pause: once its timer is set, let it run.
      void (async () => {
        while (clock.pending === 0) await new Promise((resolve) => setImmediate(resolve));
        await clock.advance(100);
      })();
    });
    expect([(error as Error).name, (error as { reason?: string }).reason]).toEqual([
      'CallRejectedError',
      'BudgetExhausted',
    ]);
    expect(server.seen).toHaveLength(1);
  });
});

describe('a resumed download is one call for observers', () => {
  /** {@link setup} with an observer recording call starts and ends beside each event's call state. */
  function observedSetup(changes: PolicyChanges = {}) {
    const { clock, events, policy } = jumpingPolicy('files', changes);
    const log: string[] = [];
    let calls = 0;
    const observed = policy.withListener({
      callStarted: () => ({ call: ++calls }),
      event: (event: CallEvent, state: unknown) =>
        log.push(
          `${event.kind} #${event.attempt} call ${(state as { call?: number } | undefined)?.call}`,
        ),
      callEnded: (state: unknown, terminal: CallEvent) =>
        log.push(
          `ended call ${(state as { call: number }).call}: ${terminal.reason} after ${terminal.attempt} attempts, ${terminal.duration} ms`,
        ),
    });
    return {
      clock,
      events,
      log,
      http: createResilientFetch({ policy: observed, resumeDownloads: true }),
    };
  }

  it('one call start, the resume as attempt 2 of it, one terminal event when the body is done', async () => {
    const { server, breakBody } = await fileServer('reset');
    const { log, http } = observedSetup();
    const response = await http(`${server.url}/file.bin`);
    // Headers are in, the body is not: the call is still open.
    expect(log).toEqual(['attempt #1 call 1']);
    const { bytes } = await read(response, breakBody);
    expect(bytes.equals(CONTENT)).toBe(true);
    expect(log).toEqual([
      'attempt #1 call 1',
      'retrying #1 call 1',
      'attempt #2 call 1',
      'streamResumed #2 call 1',
      'succeeded #2 call 1',
      // 50 ms: the backoff before the resume, on the policy's clock.
      'ended call 1: succeeded after 2 attempts, 50 ms',
    ]);
  });

  it('a refused resume ends the call failed (permanent, ResumeRefusedError); a body read without a break ends it succeeded', async () => {
    const { server, breakBody } = await fileServer('close', { first: { etag: 'W/"v1"' } });
    const { events, log, http } = observedSetup();
    const { error } = await read(await http(`${server.url}/file.bin`), breakBody);
    expect(error).toBeInstanceOf(ResumeRefusedError);
    expect(
      events.filter((e) => e.isTerminal).map((e) => [e.kind, e.reason, e.verdict, e.error]),
    ).toEqual([['failed', 'permanent', 'Permanent', 'ResumeRefusedError']]);
    expect(log.at(-1)).toBe('ended call 1: permanent after 1 attempts, 0 ms');
    const whole = await serve((_n, _req, res) => {
      res.writeHead(200, { etag: '"v1"', 'accept-ranges': 'bytes', 'content-length': 5 });
      res.end('12345');
    });
    log.length = 0;
    expect(await (await http(`${whole.url}/small.bin`)).text()).toBe('12345');
    expect(log).toEqual([
      'attempt #1 call 2',
      'succeeded #1 call 2',
      'ended call 2: succeeded after 1 attempts, 0 ms',
    ]);
  });

  it('a body cancelled by the caller ends the call as it was accepted; no attempt left ends it with what broke the body', async () => {
    const { server, breakBody } = await fileServer('close');
    const { log, http } = observedSetup({ attempts: 1 });
    const cancelled = await http(`${server.url}/file.bin`);
    await cancelled.body!.cancel();
    expect(log).toEqual([
      'attempt #1 call 1',
      'succeeded #1 call 1',
      'ended call 1: succeeded after 1 attempts, 0 ms',
    ]);
    log.length = 0;
    const { error } = await read(await http(`${server.url}/file.bin`), breakBody);
    expect((error as Error).name).toBe('TypeError');
    expect(log).toEqual([
      'attempt #1 call 2',
      'failed #1 call 2',
      'ended call 2: attemptsExhausted after 1 attempts, 0 ms',
    ]);
  });
});

describe('a resumed download whose body is never read', () => {
  it('ends its call when the response is collected, so the call is never lost to its observer', async () => {
    // The test process has no --expose-gc: turn it on and take gc from a fresh context.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { server } = await fileServer('stall');
    const { events, http } = setup();
    await http(`${server.url}/file.bin`);
    expect(events.filter((e) => e.isTerminal)).toEqual([]);
    for (let round = 0; round < 20 && !events.some((e) => e.isTerminal); round++) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(events.filter((e) => e.isTerminal).map((e) => [e.kind, e.attempt])).toEqual([
      ['succeeded', 1],
    ]);
    // Three full collections suffice alone (about 0.4 s); in a suite worker's large heap on a loaded
    // CI machine one can take seconds.
  }, 60_000);
});

describe('resumeDownloads options', () => {
  it('cannot be combined with bufferResponses', () => {
    expect(() =>
      createResilientFetch({
        policy: Resilience.default,
        resumeDownloads: true,
        bufferResponses: true,
      }),
    ).toThrow(
      'resumeDownloads: true is invalid: cannot be combined with bufferResponses: true (a buffered body is retried whole, never resumed)',
    );
  });

  it('leaves a caller Range request and a HEAD alone', async () => {
    const server = await serve((_n, req, res) => {
      res.writeHead(req.headers.range === undefined ? 200 : 206, {
        etag: '"v1"',
        'accept-ranges': 'bytes',
        'content-range': 'bytes 5-9/10',
        'content-length': 5,
      });
      res.end(req.method === 'HEAD' ? undefined : '56789');
    });
    const { http } = setup();
    const ranged = await http(`${server.url}/file.bin`, { headers: { range: 'bytes=5-' } });
    expect([ranged.status, await ranged.text()]).toEqual([206, '56789']);
    const head = await http(`${server.url}/file.bin`, { method: 'HEAD' });
    expect([head.status, head.body]).toEqual([200, null]);
  });
});
