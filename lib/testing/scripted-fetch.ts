import { type Clock, PolicyConfigError, sleep, SystemClock } from '../core/index.js';
import {
  type FetchFunction,
  type HeaderValues,
  type ResponseBody,
  checkResponseParts,
  fetchSignal,
  syntheticResponse,
} from './fetch-function.js';
import { checkClock, checkDuration, checkStatus, checkTimes } from './option-checks.js';
import { ScriptQueue } from './script-queue.js';

/** Options of {@link ScriptedFetch}. */
export interface ScriptedFetchOptions {
  /** The clock scripted delays wait on (default `SystemClock.instance`: real time — pass your test's `FakeClock`). */
  readonly clock?: Clock;
}

/** One scripted answer of {@link ScriptedFetch.responds}. */
export interface ScriptedResponseOptions {
  /** How many consecutive requests get this answer (integer >= 1, default 1). */
  readonly times?: number;
  /** Response headers. */
  readonly headers?: HeaderValues;
  /** Response body: text or bytes (default none). Not allowed with `json`, nor for statuses 204, 205, 304. */
  readonly body?: ResponseBody;
  /** A value sent as a JSON body; sets `content-type: application/json` unless `headers` has one. */
  readonly json?: unknown;
  /** The status text (default `''`). */
  readonly statusText?: string;
  /** Milliseconds to wait on the clock before answering (default 0); an aborted request stops the wait. */
  readonly delay?: number;
}

/** How a scripted network failure of {@link ScriptedFetch.throws} repeats and waits. */
export interface ScriptedErrorOptions {
  /** How many consecutive requests fail (integer >= 1, default 1). */
  readonly times?: number;
  /** Milliseconds to wait on the clock before failing (default 0); an aborted request stops the wait. */
  readonly delay?: number;
}

/** A request as {@link ScriptedFetch} saw it. */
export interface RecordedRequest {
  /** The method, upper-cased as `Request` normalizes it (`GET`, `POST`, …). */
  readonly method: string;
  /** The absolute URL. */
  readonly url: string;
  /** The request headers as a plain object with lower-case names (repeated headers joined by `, `). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The body bytes, or `undefined` when the request had no body. Filled once the body has been read,
   * which is before the scripted delay starts and before the fetch settles.
   */
  readonly body: Uint8Array | undefined;
}

type Answer =
  | {
      readonly kind: 'responds';
      readonly status: number;
      readonly headers: HeaderValues | undefined;
      readonly body: ResponseBody | undefined;
      readonly statusText: string | undefined;
      readonly delay: number;
    }
  | { readonly kind: 'throws'; readonly error: unknown; readonly delay: number };

/**
 * A fetch-compatible transport that answers from a script instead of the network, and records every
 * request it receives: test an HTTP client and its policy without a server.
 *
 * ```ts
 * const clock = new FakeClock();
 * const transport = new ScriptedFetch({ clock })
 *   .responds(503, { times: 2, headers: { 'retry-after': '1' } })
 *   .responds(200, { json: { id: 7 } });
 * const response = await policy.run(({ signal }) => transport.fetch('https://api.test/orders/7', { signal }));
 * expect(transport.callCount).toBe(3);
 * ```
 *
 * Like {@link Sequence}, each request consumes the next scripted answer and the last answer repeats
 * once the script is used up; a request to an empty script rejects with an `Error`.
 * Like a real `fetch`: an input the `Request` constructor refuses (a relative URL, a GET with a body)
 * rejects with its `TypeError`; a request whose signal is already aborted rejects with the signal's
 * reason (an `AbortError` `DOMException` for a plain `abort()`). Neither is counted nor recorded,
 * since nothing was sent. A signal aborted during a scripted delay rejects the same way, clears the
 * timer and removes its listener; that request was sent, so it is counted and recorded.
 */
export class ScriptedFetch {
  private readonly script = new ScriptQueue<Answer>();
  private readonly recorded: RecordedRequest[] = [];
  private readonly clock: Clock;

  /**
   * @param options `clock`: the clock scripted delays wait on (default `SystemClock.instance`).
   * @throws PolicyConfigError when `clock` is not a Clock.
   */
  constructor(options: ScriptedFetchOptions = {}) {
    const clock = options.clock ?? SystemClock.instance;
    checkClock('clock', clock);
    this.clock = clock;
  }

  /**
   * The fetch function itself, bound to this script: pass `scripted.fetch` wherever a `fetch` is expected.
   * @returns a fresh `Response` per request (its `url` is the request's URL)
   * @throws the scripted error; the signal's reason on abort; `TypeError` for a request `Request` refuses.
   */
  readonly fetch: FetchFunction = (input, init) => this.handle(input, init);

  /**
   * Adds an answer with HTTP `status` for the next `times` requests.
   * @param status an integer in [200, 599] (what `Response` can carry)
   * @param options `times` (default 1), `headers`, `body` or `json`, `statusText`, `delay` (ms, default 0)
   * @throws PolicyConfigError naming the field for an invalid status, count, delay, header or body.
   */
  responds(status: number, options: ScriptedResponseOptions = {}): this {
    checkStatus('status', status);
    const times = checkTimes('times', options.times ?? 1);
    const delay = checkDuration('delay', options.delay ?? 0);
    let { headers, body } = options;
    if (options.json !== undefined) {
      if (body !== undefined)
        throw new PolicyConfigError('json', options.json, 'must not be given together with body');
      body = JSON.stringify(options.json);
      const list = new Headers(headers as ConstructorParameters<typeof Headers>[0]);
      if (!list.has('content-type')) list.set('content-type', 'application/json');
      headers = [...list];
    }
    checkResponseParts(status, { headers, body, statusText: options.statusText });
    this.script.add(
      { kind: 'responds', status, headers, body, statusText: options.statusText, delay },
      times,
    );
    return this;
  }

  /**
   * Adds a network failure: the next requests reject with `error` (the same value each time).
   * @param error what `fetch` rejects with (a real network failure is a `TypeError('fetch failed')`
   *   with a `cause`; anything may be scripted)
   * @param options a count (integer >= 1, default 1), or `{ times, delay }` with `delay` in ms
   * @throws PolicyConfigError for an invalid count or delay.
   */
  throws(error: unknown, options: number | ScriptedErrorOptions = 1): this {
    const { times = 1, delay = 0 } = typeof options === 'number' ? { times: options } : options;
    checkTimes('times', times);
    checkDuration('delay', delay);
    this.script.add({ kind: 'throws', error, delay }, times);
    return this;
  }

  /** How many requests reached the script (the same as `requests.length`). */
  get callCount(): number {
    return this.recorded.length;
  }

  /** Every request received, in the order they were made. */
  get requests(): readonly RecordedRequest[] {
    return this.recorded;
  }

  /** How many scripted answers are left before the last one starts repeating. */
  get remaining(): number {
    return this.script.remaining;
  }

  private async handle(
    input: string | URL | Request,
    init: RequestInit | undefined,
  ): Promise<Response> {
    const signal = fetchSignal(input, init);
    if (signal?.aborted) throw signal.reason;
    // `signal: null` keeps the Request from linking itself to the caller's signal (a listener we could not remove).
    const request = new Request(input, { ...init, signal: null });
    const record: { -readonly [K in keyof RecordedRequest]: RecordedRequest[K] } = {
      method: request.method,
      url: request.url,
      headers: Object.fromEntries(request.headers),
      body: undefined,
    };
    this.recorded.push(record);
    const answer = this.script.take();
    if (request.body !== null) record.body = new Uint8Array(await request.arrayBuffer());
    if (answer === undefined) {
      throw new Error(
        'ScriptedFetch: no answer scripted; add responds() or throws() before fetching',
      );
    }
    await sleep(this.clock, answer.delay, signal);
    if (answer.kind === 'throws') throw answer.error;
    return syntheticResponse(answer.status, request.url, answer);
  }
}
