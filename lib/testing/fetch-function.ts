import { PolicyConfigError } from '../core/index.js';

/** The shape of the global `fetch` (Node 20's undici): what `ScriptedFetch` provides and `Chaos.fetch` wraps. */
export type FetchFunction = (
  input: string | URL | Request,
  init?: RequestInit,
) => Promise<Response>;

/**
 * Response headers as a test writes them: a plain object, a list of name/value pairs, or `Headers`.
 */
export type HeaderValues =
  Record<string, string> | ReadonlyArray<readonly [string, string]> | Headers;

/** A synthetic response's body: text, bytes, or nothing. */
export type ResponseBody = string | Uint8Array;

type HeadersInitArg = ConstructorParameters<typeof Headers>[0];

/**
 * The signal a real `fetch` would obey: `init.signal` when the key is given (even `null`, which means
 * none), else the input `Request`'s own signal.
 * @internal
 */
export function fetchSignal(
  input: string | URL | Request,
  init: RequestInit | undefined,
): AbortSignal | undefined {
  if (init !== undefined && 'signal' in init) return init.signal ?? undefined;
  return input instanceof Request ? input.signal : undefined;
}

/** The request URL as text, without constructing a `Request` (which would link to the caller's signal). @internal */
export function fetchUrl(input: string | URL | Request): string {
  if (input instanceof Request) return input.url;
  if (input instanceof URL) return input.href;
  try {
    return new URL(input).href;
  } catch {
    return String(input);
  }
}

/**
 * Builds a fresh `Response` (bodies are read once, so every answer gets its own) whose `url` reads
 * like a fetched one.
 * @internal
 */
export function syntheticResponse(
  status: number,
  url: string,
  options: {
    headers?: HeaderValues | undefined;
    body?: ResponseBody | undefined;
    statusText?: string | undefined;
  },
): Response {
  const response = new Response(options.body ?? null, {
    status,
    ...(options.statusText === undefined ? {} : { statusText: options.statusText }),
    ...(options.headers === undefined
      ? {}
      : { headers: new Headers(options.headers as HeadersInitArg) }),
  });
  if (url !== '')
    Object.defineProperty(response, 'url', { value: url, enumerable: false, configurable: true });
  return response;
}

/** Statuses whose responses must not have a body. */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * Checks a scripted response once at scripting time, so a mistake fails where it was written rather
 * than inside a policy run.
 * @throws PolicyConfigError naming the field (`headers`, `body`, `statusText`) for values `Response` would refuse.
 * @internal
 */
export function checkResponseParts(
  status: number,
  options: {
    headers?: HeaderValues | undefined;
    body?: ResponseBody | undefined;
    statusText?: string | undefined;
  },
  prefix = '',
): void {
  if (options.headers !== undefined) {
    try {
      new Headers(options.headers as HeadersInitArg);
    } catch (error) {
      throw new PolicyConfigError(
        `${prefix}headers`,
        options.headers,
        `must be valid HTTP headers (${(error as Error).message})`,
      );
    }
  }
  if (options.body !== undefined) {
    if (typeof options.body !== 'string' && !(options.body instanceof Uint8Array)) {
      throw new PolicyConfigError(
        `${prefix}body`,
        options.body,
        'must be a string or a Uint8Array',
      );
    }
    if (NULL_BODY_STATUSES.has(status)) {
      throw new PolicyConfigError(
        `${prefix}body`,
        options.body,
        `must be absent for status ${status} (a null-body status)`,
      );
    }
  }
  if (options.statusText !== undefined && typeof options.statusText !== 'string') {
    throw new PolicyConfigError(`${prefix}statusText`, options.statusText, 'must be a string');
  }
}
