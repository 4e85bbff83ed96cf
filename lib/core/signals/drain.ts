/**
 * The shutdown switch of a set of policies (DESIGN §3.12, §4 "Shutdown"): once started, calls stop
 * retrying. A call sleeping in backoff or in a guarded pause after a failure settles at once with the
 * failure it already had (stop reason `draining`, a `draining` event before the terminal one); a call
 * about to decide a retry stops the same way; a new call still makes its first attempt. One-way: a
 * drain never ends (build new policies for a new life). The Nest registry starts its drain in
 * `beforeApplicationShutdown`; pass one to policies of your own with `with({ drain })`.
 *
 * ```ts
 * const drain = new Drain();
 * const payments = Resilience.http.with({ name: 'payments', drain });
 * process.once('SIGTERM', () => drain.start());
 * ```
 */
export class Drain {
  private started = false;
  private readonly waiting = new Set<() => void>();

  /** Whether {@link Drain.start} was called. */
  get draining(): boolean {
    return this.started;
  }

  /** Starts draining: wakes every waiting call once. Idempotent. */
  start(): void {
    if (this.started) return;
    this.started = true;
    const woken = [...this.waiting];
    this.waiting.clear();
    for (const wake of woken) {
      try {
        wake();
      } catch {
        // One waiter's failure must not keep the others asleep.
      }
    }
  }

  /**
   * Calls `wake` once when draining starts (never when it has already started: check
   * {@link Drain.draining} first). @returns a function that forgets `wake` (call it when the wait ends).
   */
  onStart(wake: () => void): () => void {
    this.waiting.add(wake);
    return () => void this.waiting.delete(wake);
  }

  /** Calls waiting for the drain now (tests and health read it). */
  get waiters(): number {
    return this.waiting.size;
  }
}
