import { Agent } from 'node:http';
import { postCall } from './post-call.js';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { PerSecond, type Timeline } from './timeline.js';

/** What the driver sends and for how long. */
export interface LoadPlan {
  /** Base URL of the app, loopback only. */
  readonly url: string;
  /** Calls per second. */
  readonly rate: number;
  /** Length of the sending window, ms. */
  readonly durationMs: number;
  /** Most calls in flight. */
  readonly concurrency: number;
  /** A call still unanswered after this long is abandoned, ms. */
  readonly callTimeoutMs: number;
}

/** What the driver saw, filed by the second each call was sent. */
export interface LoadResult {
  /** Calls sent to `/checkout`. */
  readonly sent: PerSecond;
  /** Calls answered 2xx. */
  readonly succeeded: PerSecond;
  /** Calls that were due while the driver was at its concurrency cap (not sent). */
  readonly skipped: number;
  /** Answers by status code; `error` for a failed or abandoned connection. */
  readonly statuses: ReadonlyMap<string, number>;
}

// How often the sender wakes up; calls that fell due since the last tick go out together.
const TICK_MS = 5;

/**
 * An open-loop load generator: it sends `rate` calls per second on schedule whether or not earlier
 * calls have been answered, as real users do, so a slow app does not quietly lower the load. The
 * total count is fixed up front and every call has a timeout, so a run always ends by itself.
 */
export class LoadDriver {
  private readonly sent = new PerSecond();
  private readonly succeeded = new PerSecond();
  private readonly statuses = new Map<string, number>();
  private readonly agent: Agent;
  private readonly sockets = new Set<Socket>();
  private inFlight = 0;
  private issued = 0;
  private skipped = 0;

  constructor(
    private readonly plan: LoadPlan,
    private readonly timeline: Timeline,
  ) {
    if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(plan.url))
      throw new Error(`load driver: loopback URLs only, got ${plan.url}`);
    this.agent = new Agent({ keepAlive: true, maxSockets: plan.concurrency });
  }

  /** Sends the whole plan, waits for every call to settle, then closes its sockets and waits until they have closed. */
  async run(): Promise<LoadResult> {
    const total = Math.round((this.plan.rate * this.plan.durationMs) / 1000);
    await new Promise<void>((resolve) => {
      let sending = true;
      const settleIfDone = (): void => {
        if (!sending && this.inFlight === 0) resolve();
      };
      const tick = (): void => {
        const due = Math.min(
          total,
          Math.floor((this.timeline.elapsed() * this.plan.rate) / 1000) + 1,
        );
        while (this.issued < due) {
          this.issued++;
          if (this.inFlight >= this.plan.concurrency) this.skipped++;
          else this.send(settleIfDone);
        }
        if (this.issued >= total) {
          clearInterval(timer);
          sending = false;
          settleIfDone();
        }
      };
      const timer = setInterval(tick, TICK_MS);
      tick();
    });
    this.agent.destroy();
    // destroy() only starts closing: wait for each socket's 'close', so none outlives the run.
    await Promise.all(
      [...this.sockets].map((socket) => (socket.closed ? undefined : once(socket, 'close'))),
    );
    return this.live;
  }

  /** The counters so far (they keep growing while the run is in progress). */
  get live(): LoadResult {
    return {
      sent: this.sent,
      succeeded: this.succeeded,
      skipped: this.skipped,
      statuses: this.statuses,
    };
  }

  private send(onSettled: () => void): void {
    const second = this.timeline.second();
    this.sent.add(second);
    this.inFlight++;
    let settled = false;
    // A hard bound on the whole call, not just socket idle time; cleared as soon as the call settles.
    const abandon = new AbortController();
    const timeout = setTimeout(() => abandon.abort(), this.plan.callTimeoutMs);
    const settle = (status: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      this.inFlight--;
      this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
      if (status.startsWith('2')) this.succeeded.add(second);
      onSettled();
    };
    postCall(`${this.plan.url}/checkout`, this.agent, abandon.signal, {}, this.sockets, settle);
  }
}
