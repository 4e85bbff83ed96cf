/**
 * A response body whose byte count disagrees with what its headers promised: it ended before
 * `expected` bytes (a truncated body the transport did not report), or carried more. Classified
 * Transient (an error that is neither a `TypeError` nor a `RangeError`), so with `bufferResponses` a
 * GET whose body came short is retried. undici reports a short body itself (`TypeError: terminated`)
 * and never delivers past `Content-Length`; this covers transports that do not, and a 206 whose body
 * disagrees with its `Content-Range`.
 */
export class BodyLengthError extends Error {
  override readonly name = 'BodyLengthError';
  /**
   * @param expected bytes the header promised
   * @param received bytes that arrived: fewer than `expected` when the body ended short, more when it
   *   carried too many (counted up to the chunk that went past `expected`)
   * @param header which header promised `expected`: `Content-Length`, or a 206's `Content-Range`
   */
  constructor(
    readonly expected: number,
    readonly received: number,
    readonly header: 'Content-Length' | 'Content-Range' = 'Content-Length',
  ) {
    super(
      received < expected
        ? `the response body ended after ${received} of the ${expected} bytes its ${header} promised`
        : `the response body carried ${received} bytes, more than the ${expected} its ${header} promised`,
    );
  }
}

const LENGTH = /^\d+$/;

/**
 * The body length `headers` promise the caller will read: `Content-Length` when it is a plain
 * integer and the body is not `Content-Encoding`-ed (fetch decodes it, so the header counts other
 * bytes than the caller reads); `undefined` otherwise.
 */
export function promisedLength(headers: Headers): number | undefined {
  const length = headers.get('content-length')?.trim();
  if (length === undefined || !LENGTH.test(length)) return undefined;
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
  return encoding === undefined || encoding === '' || encoding === 'identity'
    ? Number(length)
    : undefined;
}
