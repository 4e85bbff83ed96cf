/**
 * What a team writes by hand when it "adds retries": call, and on a 5xx or a network error wait and
 * call again, up to `attempts` times — no budget, no breaker, no deadline, nothing from the caller.
 * The wait is the library's default backoff (100 ms doubling, full jitter), so the two
 * configurations differ in what decides a retry, not in how long they wait.
 */
export async function naiveFetch(
  url: string,
  init: RequestInit,
  attempts: number,
): Promise<Response> {
  let last: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (attempt > 1) await wait(Math.random() * 100 * 2 ** (attempt - 2), init.signal ?? undefined);
    try {
      const response = await fetch(url, init);
      if (response.status < 500 || attempt === attempts) return response;
      await response.body?.cancel();
      last = response;
    } catch (error) {
      if (init.signal?.aborted || attempt === attempts) throw error;
      last = error;
    }
  }
  throw last;
}

function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = (): void => {
      signal?.removeEventListener('abort', aborted);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const aborted = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
