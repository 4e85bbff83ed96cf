import { AttemptStalledError, type Clock } from '../core/index.js';

/**
 * A copy of `response` whose body is `body`, keeping status, headers and the properties the
 * `Response` constructor cannot set (`url`, `redirected`).
 */
function rewrap(response: Response, body: RequestInit['body']): Response {
  const copy = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  Object.defineProperty(copy, 'url', { value: response.url });
  Object.defineProperty(copy, 'redirected', { value: response.redirected });
  return copy;
}

/**
 * Reads the whole body inside the attempt (`bufferResponses: true`): a body broken or stalled mid-way
 * fails the attempt, which is then retried like any transient failure.
 */
export async function bufferedResponse(response: Response): Promise<Response> {
  if (response.body === null) return response;
  return rewrap(response, await response.arrayBuffer());
}

/**
 * Bounds the silence of `response`'s body while the caller reads it: a read that gets nothing for
 * `gap` ms fails with `AttemptStalledError` naming the bytes received, and the body is cancelled.
 * The timer runs only while a read is pending (the stream pulls on demand), so a consumer that reads
 * slowly is never taken for a stalled server; a server that goes silent while a read waits is.
 * @param gap ms allowed between two chunks while a read is pending
 */
export function gapBoundedResponse(response: Response, gap: number, clock: Clock): Response {
  const source = response.body;
  if (source === null) return response;
  const reader = source.getReader();
  let received = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        return new Promise<void>((resolve) => {
          let stalled = false;
          const timer = clock.setTimer(gap, () => {
            stalled = true;
            const error = new AttemptStalledError(gap, received);
            controller.error(error);
            reader.cancel(error).catch(() => undefined);
            resolve();
          });
          reader.read().then(
            ({ done, value }) => {
              clock.clearTimer(timer);
              if (stalled) return;
              if (done) controller.close();
              else {
                received += value.byteLength;
                controller.enqueue(value);
              }
              resolve();
            },
            (error: unknown) => {
              clock.clearTimer(timer);
              if (!stalled) controller.error(error);
              resolve();
            },
          );
        });
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  return rewrap(response, body);
}

/** Lets a response's connection go: the body is cancelled (nothing more is read from the wire). */
export function discard(response: Response | undefined): void {
  if (response?.body != null && !response.bodyUsed) response.body.cancel().catch(() => undefined);
}
