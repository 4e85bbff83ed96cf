/**
 * Waits (real time, polled every 5 ms, at most `bound` ms) until `done` holds: for what a real wire
 * does on its own (a request reaching a loopback server, a cancel arriving). Throws past the bound.
 */
export async function until(done: () => boolean, bound = 2000): Promise<void> {
  for (let waited = 0; !done(); waited += 5) {
    if (waited >= bound) throw new Error(`not done within ${bound} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** What `pending` settles with, or a note that it had not within `bound` ms (real time; the timer is cleared). */
export async function within<T>(pending: Promise<T>, bound: number): Promise<T | string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`still waiting after ${bound} ms`), bound);
  });
  try {
    return await Promise.race([pending, late]);
  } finally {
    clearTimeout(timer);
  }
}
