/**
 * Request bodies that can be sent again, byte for byte (DESIGN §5). Node's fetch consumes a stream
 * body on the first send ("body object should not be disturbed" on the second); every other body
 * kind is re-encoded from the same value on each send, except `FormData`, whose multipart boundary is
 * random per encoding. So a body is prepared once per logical call: kept as is when fetch can replay
 * it, encoded once (`FormData`), or read into memory up to a cap (streams).
 */

/** Default of `maximumReplayBytes`: the most of a one-shot stream body held for replay, 1 MiB. */
export const DEFAULT_MAXIMUM_REPLAY_BYTES = 1_048_576;

/** A body ready for the attempts of one call. */
export interface PreparedBody {
  /** What to hand fetch on each attempt (`undefined` for no body). */
  readonly body: RequestInit['body'] | undefined;
  /** False when the body is a stream larger than the cap: it can be sent once only. */
  readonly replayable: boolean;
  /** The content type the encoding chose (`FormData`'s boundary), to set when the caller set none. */
  readonly contentType: string | undefined;
  /** True when `body` is a stream (fetch needs `duplex: 'half'`). */
  readonly streaming: boolean;
}

/**
 * Thrown instead of sending attempt 2 of a call whose body could be sent only once: on the resilient
 * fetch a stream larger than `maximumReplayBytes`; on the axios seam any stream `data` (axios pipes
 * it to the socket as it reads it, so nothing is kept to send again).
 */
export class BodyNotReplayableError extends Error {
  override readonly name = 'BodyNotReplayableError';
  /**
   * @param limit the replay cap in bytes the stream body exceeded (`maximumReplayBytes`), or
   *   `undefined` on the axios seam, which holds no copy of a stream `data`
   * @param options `cause`: the failure of the attempt that consumed the body
   */
  constructor(
    readonly limit: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(
      limit === undefined
        ? 'the request data is a stream, which axios sends as it reads it and cannot send again: not retrying it (pass a Buffer or a string as data to let it retry)'
        : `the request body is a stream larger than ${limit} bytes (maximumReplayBytes) and is not replayable: not sending it again`,
      options,
    );
  }
}

const NONE: PreparedBody = Object.freeze({
  body: undefined,
  replayable: true,
  contentType: undefined,
  streaming: false,
});

/**
 * Prepares `body` for replay.
 * @param body a fetch body, or a `Request`'s body stream
 * @param limit the most bytes of a stream body buffered for replay
 */
export async function prepareBody(
  body: RequestInit['body'] | ReadableStream<Uint8Array> | null | undefined,
  limit: number,
): Promise<PreparedBody> {
  if (body === undefined || body === null) return NONE;
  if (body instanceof FormData) {
    // Encode once so every attempt sends the same boundary, bytes and Content-Length.
    const encoded = new Response(body);
    const bytes = new Uint8Array(await encoded.arrayBuffer());
    return {
      body: bytes,
      replayable: true,
      contentType: encoded.headers.get('content-type') ?? undefined,
      streaming: false,
    };
  }
  if (body instanceof ReadableStream) return bufferStream(body.getReader(), limit);
  if (isAsyncIterable(body))
    return bufferStream(iteratorReader(body[Symbol.asyncIterator]()), limit);
  // string, ArrayBuffer, typed arrays and Buffers, URLSearchParams, Blob: fetch re-encodes them identically.
  return { body, replayable: true, contentType: undefined, streaming: false };
}

interface ChunkReader {
  read(): Promise<{ done: boolean; value?: Uint8Array | string }>;
  cancel(reason?: unknown): Promise<void>;
}

/** Reads up to `limit` bytes; a longer stream is sent once, as what was read followed by the rest. */
async function bufferStream(reader: ChunkReader, limit: number): Promise<PreparedBody> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const chunk = typeof value === 'string' ? new TextEncoder().encode(value) : value!;
    chunks.push(chunk);
    size += chunk.byteLength;
    if (size > limit)
      return {
        body: continuing(chunks, reader),
        replayable: false,
        contentType: undefined,
        streaming: true,
      };
  }
  return { body: concat(chunks, size), replayable: true, contentType: undefined, streaming: false };
}

/** A one-shot stream: the chunks already read, then the rest of `reader`. */
function continuing(chunks: Uint8Array[], reader: ChunkReader): ReadableStream<Uint8Array> {
  let index = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (index < chunks.length) {
        controller.enqueue(chunks[index++]!);
        return;
      }
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(typeof value === 'string' ? new TextEncoder().encode(value) : value!);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<Uint8Array | string> {
  return (
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}

function iteratorReader(iterator: AsyncIterator<Uint8Array | string>): ChunkReader {
  return {
    read: async () => {
      const { done, value } = await iterator.next();
      return { done: done === true, value };
    },
    cancel: async () => {
      await iterator.return?.();
    },
  };
}
