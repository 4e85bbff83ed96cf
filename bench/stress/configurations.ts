/**
 * What the stress suite compares (issue 15): each configuration names the library, the settings, the
 * dependency it runs against, and the closest equivalent a peer offers — with what the peer lacks.
 * Peers are loaded from `--peers DIR` when given (cockatiel 4 and opossum 10 on Node 24), else from the
 * project's own devDependencies (cockatiel 3, opossum 9).
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Resilience, RetryBudget } from '@nresilience/nestjs/core';

/** One request to the dependency; rejects on a non-200 answer or a socket error. */
export type Call = (signal?: AbortSignal) => Promise<void>;
/** One logical operation under a library; `attempt` is called once per attempt the library makes. */
export type Operation = (attempt: Call) => Promise<void>;

/** A stress configuration. */
export interface Configuration {
  readonly id: string;
  readonly library: 'none' | 'nresilience' | 'cockatiel' | 'opossum';
  /** Share of requests the dependency fails (0 healthy, 0.5 half-failing). */
  readonly failRate: number;
  /** The settings, and what makes them the closest equivalent (what a peer lacks). */
  readonly note: string;
  /** Builds the operation; peer modules come from `peers`. */
  build(peers: Peers): Promise<Operation>;
}

/** The peer libraries' modules (their runtime shape is what the configurations use). */
export interface Peers {
  readonly cockatiel: typeof import('cockatiel');
  readonly opossum: typeof import('opossum');
  readonly versions: { readonly cockatiel: string; readonly opossum: string };
}

/** Loads cockatiel and opossum from `dir`'s node_modules, or the project's when `dir` is undefined. */
export async function loadPeers(dir: string | undefined): Promise<Peers> {
  const require = createRequire(dir === undefined ? import.meta.url : join(dir, 'package.json'));
  const load = async (name: string) => {
    const entry = require.resolve(name);
    const version = (require(`${name}/package.json`) as { version: string }).version;
    return {
      module: (await import(pathToFileURL(entry).href)) as Record<string, unknown>,
      version,
    };
  };
  const cockatiel = await load('cockatiel');
  const opossum = await load('opossum');
  return {
    cockatiel: cockatiel.module as unknown as Peers['cockatiel'],
    opossum: ((opossum.module as { default?: unknown }).default ??
      opossum.module) as Peers['opossum'],
    versions: { cockatiel: cockatiel.version, opossum: opossum.version },
  };
}

// Closest equivalent of our default backoff (exponential, 100 ms base, 30 s cap, jittered) in cockatiel.
const cockatielRetry = (peers: Peers) =>
  peers.cockatiel.retry(peers.cockatiel.handleAll, {
    maxAttempts: 2,
    backoff: new peers.cockatiel.ExponentialBackoff({ initialDelay: 100, maxDelay: 30_000 }),
  });

const healthy: Configuration[] = [
  {
    id: 'raw',
    library: 'none',
    failRate: 0,
    note: 'the request alone, no library',
    build: async () => (call) => call(),
  },
  {
    id: 'nresilience-default',
    library: 'nresilience',
    failRate: 0,
    note: 'Resilience.default: 3 attempts, exponential backoff with full jitter, retry budget',
    build: async () => (call) => Resilience.default.run(() => call()),
  },
  {
    id: 'nresilience-http',
    library: 'nresilience',
    failRate: 0,
    note: 'Resilience.http: default + breaker + 30 s deadline; the attempt signal goes to the request',
    build: async () => (call) => Resilience.http.run((ctx) => call(ctx.signal)),
  },
  {
    id: 'cockatiel-retry',
    library: 'cockatiel',
    failRate: 0,
    note: 'retry, maxAttempts 2 (3 attempts), ExponentialBackoff 100 ms–30 s; lacks a retry budget',
    build: async (peers) => {
      const policy = cockatielRetry(peers);
      return (call) => policy.execute(() => call());
    },
  },
  {
    id: 'cockatiel-full',
    library: 'cockatiel',
    failRate: 0,
    note: 'retry as above + ConsecutiveBreaker(5), halfOpenAfter 15 s + cooperative timeout(30 s) ≈ Resilience.http; lacks a budget and measured trips',
    build: async (peers) => {
      const c = peers.cockatiel;
      const policy = c.wrap(
        cockatielRetry(peers),
        c.circuitBreaker(c.handleAll, {
          halfOpenAfter: 15_000,
          breaker: new c.ConsecutiveBreaker(5),
        }),
        c.timeout(30_000, c.TimeoutStrategy.Cooperative),
      );
      return (call) => policy.execute(({ signal }) => call(signal));
    },
  },
  {
    id: 'opossum',
    library: 'opossum',
    failRate: 0,
    note: 'breaker with timeout 30 s, defaults otherwise (50 % errors over 10 s trips); lacks retries and a budget',
    build: async (peers) => {
      // One breaker for the run; `fire(attempt)` passes the operation's attempt function through.
      const breaker = new peers.opossum((attempt: Call) => attempt(), { timeout: 30_000 });
      return (call) => breaker.fire(call) as Promise<void>;
    },
  },
  // Last, so the half-failing rows below keep referring to their healthy twins by index.
  {
    id: 'raw-timeout',
    library: 'none',
    failRate: 0,
    note: 'the request with AbortSignal.timeout(30 s) passed to it: what any caller with a timeout pays, no library',
    // The platform's own timeout on purpose: this row is the cost a user pays without the library.
    build: async () => (call) => call(AbortSignal.timeout(30_000)),
  },
];

const halfFailing: Configuration[] = [
  { ...healthy[1]!, failRate: 0.5 },
  {
    id: 'nresilience-no-budget',
    library: 'nresilience',
    failRate: 0.5,
    note: 'Resilience.default with RetryBudget.none: the same retries and backoff, no budget',
    build: async () => {
      const policy = Resilience.default.with({ budget: RetryBudget.none });
      return (call) => policy.run(() => call());
    },
  },
  {
    id: 'nresilience-static-budget',
    library: 'nresilience',
    failRate: 0.5,
    note: 'Resilience.default with RetryBudget.tokenBucket(): the static bucket whatever retries do',
    build: async () => {
      const policy = Resilience.default.with({ budget: RetryBudget.tokenBucket() });
      return (call) => policy.run(() => call());
    },
  },
  { ...healthy[3]!, failRate: 0.5 },
  { ...healthy[5]!, failRate: 0.5 },
];

/** Every configuration, healthy dependency first, then the half-failing one. */
export const configurations: readonly Configuration[] = [...healthy, ...halfFailing];

/** The configuration's key in reports: its id and the dependency it ran against. */
export function keyOf(configuration: Pick<Configuration, 'id' | 'failRate'>): string {
  return `${configuration.id}@${configuration.failRate === 0 ? 'healthy' : `fail${Math.round(configuration.failRate * 100)}`}`;
}
