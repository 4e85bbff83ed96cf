import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DependencyProfile } from './scenario.js';
import { PerSecond, type Timeline } from './timeline.js';

/**
 * The failing dependency: a real HTTP server on 127.0.0.1 playing a payments provider that goes
 * through the scenario's phases. It counts every request it receives per second — the load it feels,
 * retries included — whatever the client made of the answer.
 */
export class DependencyServer {
  /** Requests received, by second of arrival. */
  readonly received = new PerSecond();
  /** Requests answered with an immediate 503 because the dependency was at capacity. */
  shed = 0;

  private inFlight = 0;
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

  /** Stops answering, drops pending answers and every connection, and closes the listener. */
  async close(): Promise<void> {
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    // Keep-alive sockets from the app's fetch pool would otherwise hold close() open for seconds.
    this.server.closeAllConnections();
    await closed;
  }

  private answer(request: IncomingMessage, response: ServerResponse): void {
    this.received.add(this.timeline.second());
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
      if (fails) reply(response, 503, { error: 'unavailable' });
      else reply(response, 200, { id: `ch_${this.received.total()}`, status: 'captured' });
    }, latency);
    this.pending.add(timer);
  }
}

function reply(response: ServerResponse, status: number, body: object): void {
  if (response.destroyed) return;
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}
