import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DependencyProfile } from './scenario.js';
import { PerSecond, type Timeline } from './timeline.js';

/** What the dependency saw of one call: when its first request arrived and how many requests it made. */
export interface CallSeen {
  /** Second (timeline index) in which the call's first request arrived. */
  readonly second: number;
  /** Requests that reached the dependency for this call: the first attempt and every retry. */
  requests: number;
}

/**
 * The failing dependency: a real HTTP server on 127.0.0.1 playing a payments provider that goes
 * through the scenario's phases. It counts every request it receives per second — the load it feels,
 * retries included — whatever the client made of the answer.
 *
 * Like a real payments provider it keys requests by `Idempotency-Key`, which lets it tell a new call
 * from a repeat of one it has already seen. Counting calls where they arrive, rather than where the
 * load driver sent them, keeps a call and its retries in the same books even when a busy machine
 * delays the app for a moment.
 */
export class DependencyServer {
  /** Requests received, by second of arrival. */
  readonly received = new PerSecond();
  /** Calls whose first request arrived, by second (a request without a key counts as a call of its own). */
  readonly calls = new PerSecond();
  /** Every call seen, by idempotency key. */
  readonly seen = new Map<string, CallSeen>();
  /** Requests answered with an immediate 503 because the dependency was at capacity. */
  shed = 0;

  private inFlight = 0;
  private captured = 0;
  private lastActivity = performance.now();
  private readonly pending = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly server: Server,
    private readonly profile: DependencyProfile,
    private readonly timeline: Timeline,
  ) {}

  /** Starts the server on an ephemeral loopback port. */
  static async start(profile: DependencyProfile, timeline: Timeline): Promise<DependencyServer> {
    const server = createServer();
    const dependency = new DependencyServer(server, profile, timeline);
    server.on('request', (request, response) => dependency.answer(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return dependency;
  }

  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /**
   * Resolves once nothing has arrived or been in progress for `quietMs`: the app in front has then
   * finished the retries of calls the load driver already gave up on, and can be closed without
   * cutting them off. Gives up after `maxMs` so a stuck app cannot hold the demo.
   * @returns whether the dependency went quiet in time
   */
  async quiet(quietMs: number, maxMs: number): Promise<boolean> {
    const until = performance.now() + maxMs;
    for (;;) {
      const now = performance.now();
      if (this.inFlight === 0 && now - this.lastActivity >= quietMs) return true;
      if (now >= until) return false;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * Forgets what it has counted so far (requests, calls, keys, shed answers): the warm-up's traffic
   * is not part of the run. Call it once the dependency is quiet.
   */
  forgetCounts(): void {
    this.received.clear();
    this.calls.clear();
    this.seen.clear();
    this.shed = 0;
  }

  /** Stops answering, drops pending answers and every connection, and closes the listener. */
  async close(): Promise<void> {
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    // Keep-alive sockets from the app's fetch pool would otherwise hold close() open for seconds.
    this.server.closeAllConnections();
    await closed;
  }

  private track(key: string | string[] | undefined, second: number): void {
    const call = typeof key === 'string' ? this.seen.get(key) : undefined;
    if (call !== undefined) {
      call.requests++;
      return;
    }
    this.calls.add(second);
    if (typeof key === 'string') this.seen.set(key, { second, requests: 1 });
  }

  private answer(request: IncomingMessage, response: ServerResponse): void {
    this.lastActivity = performance.now();
    const second = this.timeline.second();
    this.received.add(second);
    this.track(request.headers['idempotency-key'], second);
    // The body is not needed, but it must be consumed for the connection to be reused.
    request.resume();
    const phase = this.timeline.phase();
    if (this.inFlight >= this.profile.capacity) {
      this.shed++;
      reply(response, 503, { error: 'overloaded' });
      return;
    }
    this.inFlight++;
    const degraded = phase === 'degraded';
    const base = this.profile.healthyLatencyMs * (degraded ? this.profile.degradedSlowdown : 1);
    const latency = base * (0.75 + Math.random() * 0.5);
    const fails = degraded && Math.random() < this.profile.degradedErrorRate;
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      this.inFlight--;
      this.lastActivity = performance.now();
      if (fails) reply(response, 503, { error: 'unavailable' });
      else reply(response, 200, { id: `ch_${++this.captured}`, status: 'captured' });
    }, latency);
    this.pending.add(timer);
  }
}

function reply(response: ServerResponse, status: number, body: object): void {
  if (response.destroyed) return;
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}
