import { afterEach, describe, expect, it } from '@jest/globals';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AttemptStalledError } from '../../lib/core/index.js';
import {
  BodyLengthError,
  type FetchFunction,
  ResumeRefusedError,
  type ResilientFetchOptions,
  createResilientFetch,
} from '../../lib/http/index.js';
import { loopbackServers } from '../support/loopback-server.js';
import { type PolicyChanges, jumpingPolicy } from '../support/jumping-policy.js';

const { serve, closeAll } = loopbackServers();
afterEach(closeAll);

const CONTENT = 'abcdefghij';
const FIRST = { etag: '"v1"', 'accept-ranges': 'bytes', 'content-length': '10' };

/** A resilient fetch under {@link jumpingPolicy} (backoffs jump at once). */
function setup(extra: Partial<ResilientFetchOptions> = {}, changes: PolicyChanges = {}) {
  const { clock, events, policy } = jumpingPolicy('files', changes);
  return { clock, events, http: createResilientFetch({ policy, resumeDownloads: true, ...extra }) };
}

/** Reads `response`'s body to its end or its error, calling `atFour` once 4 bytes are in. */
async function read(
  response: Response,
  atFour: () => void = () => undefined,
): Promise<{ text: string; error?: unknown }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let told = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text };
      text += decoder.decode(value, { stream: true });
      if (!told && text.length >= 4) {
        told = true;
        atFour();
      }
    }
  } catch (error) {
    return { text, error };
  }
}

/**
 * The file: a 200 of `abcdefghij` (Content-Length 10, strong ETag, Accept-Ranges) that sends
 * `abcd` and breaks once the caller has read them; each request with `Range` is answered by `onRange`.
 */
async function breakingServer(onRange: (n: number, res: ServerResponse, start: number) => void) {
  let breakBody: () => void = () => undefined;
  const server = await serve((n, req: IncomingMessage, res) => {
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (range !== null) return onRange(n, res, Number(range[1]));
    res.writeHead(200, FIRST);
    res.write(CONTENT.slice(0, 4));
    breakBody = () => req.socket.destroy();
  });
  return { server, breakBody: () => breakBody() };
}

/** A 206 for `bytes start-9/10` sent chunked (no Content-Length), whose body is `body` in one write. */
function chunked206(res: ServerResponse, start: number, body: string): void {
  res.writeHead(206, { etag: '"v1"', 'content-range': `bytes ${start}-9/10` });
  res.end(body);
}

describe('a resumed body carries exactly the bytes its Content-Range promises', () => {
  it('a 206 for bytes 4-9/10 whose Content-Length says 12: refused before a byte of it is read', async () => {
    const { server, breakBody } = await breakingServer((_n, res) => {
      res.writeHead(206, { etag: '"v1"', 'content-range': 'bytes 4-9/10', 'content-length': '12' });
      res.end('efghijKLMNOP');
    });
    const { events, http } = setup();
    const { text, error } = await read(await http(`${server.url}/f`), breakBody);
    expect(text).toBe('abcd');
    expect(error).toBeInstanceOf(ResumeRefusedError);
    expect([
      (error as ResumeRefusedError).reason,
      (error as ResumeRefusedError).delivered,
      (error as Error).message,
    ]).toEqual([
      'wrongLength',
      4,
      'the download broke after 4 bytes were delivered and was not resumed: the server answered 206 with Content-Range: bytes 4-9/10 to Range: bytes=4- and Content-Length: 12, not the 6 bytes that range holds',
    ]);
    expect(events.filter((e) => e.isTerminal).map((e) => [e.kind, e.reason, e.error])).toEqual([
      ['failed', 'permanent', 'ResumeRefusedError'],
    ]);
  });

  it('a chunked 206 for bytes 4-9/10 that carries 12 bytes: the caller never reads past byte 10', async () => {
    const { server, breakBody } = await breakingServer((_n, res, start) =>
      chunked206(res, start, 'efghijKLMNOP'),
    );
    const { events, http } = setup();
    const { text, error } = await read(await http(`${server.url}/f`), breakBody);
    // The chunk that runs past the promised end is not delivered: the caller keeps what it had.
    expect(text).toBe('abcd');
    expect(error).toBeInstanceOf(ResumeRefusedError);
    const refused = error as ResumeRefusedError;
    expect([refused.reason, refused.delivered, refused.message]).toEqual([
      'wrongLength',
      4,
      'the download broke after 4 bytes were delivered and was not resumed: the 206 carried more bytes than its Content-Range promised (the response body carried 16 bytes, more than the 10 its Content-Range promised)',
    ]);
    expect([
      (refused.cause as BodyLengthError).expected,
      (refused.cause as BodyLengthError).received,
    ]).toEqual([10, 16]);
    expect(events.filter((e) => e.isTerminal).map((e) => [e.kind, e.reason, e.error])).toEqual([
      ['failed', 'permanent', 'ResumeRefusedError'],
    ]);
  });

  it('a 206 for bytes 4-9/10 that carries 3 bytes and ends: the rest is asked for as the next attempt', async () => {
    const { server, breakBody } = await breakingServer((_n, res, start) =>
      chunked206(res, start, start === 4 ? 'efg' : CONTENT.slice(start)),
    );
    const { events, http } = setup();
    const { text, error } = await read(await http(`${server.url}/f`), breakBody);
    expect(error).toBeUndefined();
    expect(text).toBe(CONTENT);
    expect(server.seen.map((r) => r.headers.range)).toEqual([undefined, 'bytes=4-', 'bytes=7-']);
    expect(events.map((e) => [e.kind, e.attempt, e.verdict, e.error])).toEqual([
      ['attempt', 1, 'Ok', undefined],
      // undici's TypeError: terminated (named 'object' here: Jest runs the test in another realm).
      ['retrying', 1, 'Transient', expect.any(String)],
      ['attempt', 2, 'Ok', undefined],
      ['streamResumed', 2, 'Ok', undefined],
      ['retrying', 2, 'Transient', 'BodyLengthError'],
      ['attempt', 3, 'Ok', undefined],
      ['streamResumed', 3, 'Ok', undefined],
      ['succeeded', 3, 'Ok', undefined],
    ]);
  });

  it('a short 206 with no attempt left fails the read at 7 of 10 bytes, and the call is failed, not succeeded', async () => {
    const { server, breakBody } = await breakingServer((_n, res, start) =>
      chunked206(res, start, 'efg'),
    );
    const { events, http } = setup({}, { attempts: 2 });
    const { text, error } = await read(await http(`${server.url}/f`), breakBody);
    expect(text).toBe('abcdefg');
    expect(error).toBeInstanceOf(BodyLengthError);
    expect([
      (error as BodyLengthError).expected,
      (error as BodyLengthError).received,
      (error as Error).message,
    ]).toEqual([
      10,
      7,
      'the response body ended after 7 of the 10 bytes its Content-Range promised',
    ]);
    expect(
      events.filter((e) => e.isTerminal).map((e) => [e.kind, e.reason, e.attempt, e.error]),
    ).toEqual([['failed', 'attemptsExhausted', 2, 'BodyLengthError']]);
    expect(server.seen).toHaveLength(2);
  });
});

/** A transport answering from memory: `answers[n]` for request n; records each request's headers. */
function memoryTransport(answers: Array<() => Response>) {
  const seen: Headers[] = [];
  const fetch: FetchFunction = async (_input, init) => {
    seen.push(new Headers(init?.headers));
    return answers[seen.length - 1]!();
  };
  return { fetch, seen };
}

describe('the first answer is held to its Content-Length', () => {
  it('a first body that ends cleanly at 7 of 10 bytes (a transport that did not say so) is resumed from byte 7', async () => {
    const { fetch, seen } = memoryTransport([
      () => new Response('abcdefg', { headers: FIRST }),
      () =>
        new Response('hij', {
          status: 206,
          headers: { etag: '"v1"', 'content-range': 'bytes 7-9/10', 'content-length': '3' },
        }),
    ]);
    const { events, http } = setup({ fetch });
    const { text, error } = await read(await http('http://files.test/f'));
    expect([text, error]).toEqual([CONTENT, undefined]);
    expect(seen.map((h) => [h.get('range'), h.get('if-range')])).toEqual([
      [null, null],
      ['bytes=7-', '"v1"'],
    ]);
    expect(events.filter((e) => e.kind === 'retrying').map((e) => e.error)).toEqual([
      'BodyLengthError',
    ]);
  });

  it('a first body of 16 bytes under Content-Length 10: the read fails and no byte past 10 is delivered', async () => {
    const { fetch } = memoryTransport([() => new Response('abcdefghijKLMNOP', { headers: FIRST })]);
    const { events, http } = setup({ fetch });
    const { text, error } = await read(await http('http://files.test/f'));
    expect(text).toBe('');
    expect(error).toBeInstanceOf(BodyLengthError);
    expect((error as Error).message).toBe(
      'the response body carried 16 bytes, more than the 10 its Content-Length promised',
    );
    expect(events.filter((e) => e.isTerminal).map((e) => [e.kind, e.error])).toEqual([
      ['failed', 'BodyLengthError'],
    ]);
  });
});

describe('a plain body shorter than its Content-Length fails its attempt (bufferResponses)', () => {
  it('a transport that ends the body cleanly at 7 of 10 bytes: Transient BodyLengthError, the GET retried', async () => {
    const { fetch, seen } = memoryTransport([
      () => new Response('abcdefg', { headers: { 'content-length': '10' } }),
      () => new Response(CONTENT, { headers: { 'content-length': '10' } }),
    ]);
    const { events, http } = setup({ fetch, resumeDownloads: false, bufferResponses: true });
    const response = await http('http://files.test/f');
    expect(await response.text()).toBe(CONTENT);
    expect(seen).toHaveLength(2);
    expect(events.map((e) => [e.kind, e.attempt, e.verdict, e.error])).toEqual([
      ['attempt', 1, 'Transient', 'BodyLengthError'],
      ['retrying', 1, 'Transient', 'BodyLengthError'],
      ['attempt', 2, 'Ok', undefined],
      ['succeeded', 2, 'Ok', undefined],
    ]);
  });

  it('undici reporting a short body (the socket closed at 7 of 10 bytes): Transient, the GET retried', async () => {
    const server = await serve((n, req, res) => {
      res.writeHead(200, { 'content-length': '10' });
      if (n === 0) {
        res.write('abcdefg');
        setImmediate(() => req.socket.end());
      } else res.end(CONTENT);
    });
    const { events, http } = setup({ resumeDownloads: false, bufferResponses: true });
    const response = await http(`${server.url}/f`);
    expect(await response.text()).toBe(CONTENT);
    expect(events.map((e) => [e.kind, e.attempt, e.verdict, e.error])).toEqual([
      // undici's TypeError: terminated (named 'object' here: Jest runs the test in another realm).
      ['attempt', 1, 'Transient', expect.any(String)],
      ['retrying', 1, 'Transient', expect.any(String)],
      ['attempt', 2, 'Ok', undefined],
      ['succeeded', 2, 'Ok', undefined],
    ]);
  });
});

describe('a body that stalls aborts the signal its attempt handed the transport', () => {
  /** `globalThis.fetch`, recording the signal each attempt handed it. */
  function recordingFetch() {
    const signals: AbortSignal[] = [];
    const fetch: FetchFunction = (input, init) => {
      signals.push(init!.signal!);
      return globalThis.fetch(input, init);
    };
    return { fetch, signals };
  }

  it('without resumeDownloads: the stall fails the read and aborts the transport signal with it', async () => {
    const server = await serve((_n, _req, res) => {
      res.writeHead(200, { 'content-length': '10' });
      res.write('abcd');
    });
    const { fetch, signals } = recordingFetch();
    const { clock, http } = setup({ fetch, resumeDownloads: false, bodyGapTimeout: 500 });
    const response = await http(`${server.url}/f`);
    expect(signals[0]!.aborted).toBe(false);
    const { text, error } = await read(
      response,
      () => void setImmediate(() => void clock.advance(500)),
    );
    expect(text).toBe('abcd');
    expect(error).toBeInstanceOf(AttemptStalledError);
    expect((error as Error).message).toBe('stalled: nothing arrived for 500ms after 4 bytes');
    expect([signals.length, signals[0]!.aborted, signals[0]!.reason]).toEqual([1, true, error]);
  });

  it("with resumeDownloads: the stalled attempt's transport signal is aborted, the resume's is not", async () => {
    const server = await serve((n, _req, res) => {
      if (n === 0) {
        res.writeHead(200, FIRST);
        return void res.write('abcd');
      }
      res.writeHead(206, { etag: '"v1"', 'content-range': 'bytes 4-9/10', 'content-length': '6' });
      res.end(CONTENT.slice(4));
    });
    const { fetch, signals } = recordingFetch();
    const { clock, http } = setup({ fetch, bodyGapTimeout: 500 });
    const { text, error } = await read(
      await http(`${server.url}/f`),
      () => void setImmediate(() => void clock.advance(500)),
    );
    expect([text, error]).toEqual([CONTENT, undefined]);
    expect(signals.map((s) => s.aborted)).toEqual([true, false]);
    expect(signals[0]!.reason).toBeInstanceOf(AttemptStalledError);
    expect((signals[0]!.reason as AttemptStalledError).received).toBe(4);
  });
});
