/**
 * One stress run (issue 15), in a fresh process: `--config KEY` (see `configurations.ts`) against the
 * dependency at `--port`, 80 concurrent callers in a closed loop for `--ms` milliseconds, each awaiting
 * one logical operation at a time. Prints one JSON line: operations, successes, attempts and retries
 * the library made, latency p50/p99 (ms), the share of wall time spent in GC pauses (perf_hooks),
 * the peak heap, and this process's CPU time (user + system) per operation in µs: on a machine other
 * processes load, throughput and latency move with their load, CPU time per operation much less.
 */
import { Agent, get } from 'node:http';
import { PerformanceObserver, createHistogram } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { type Call, configurations, keyOf, loadPeers } from './configurations.js';

const { values } = parseArgs({
  options: {
    config: { type: 'string' },
    port: { type: 'string' },
    ms: { type: 'string', default: '5000' },
    callers: { type: 'string', default: '80' },
    peers: { type: 'string' },
  },
});
const configuration = configurations.find((c) => keyOf(c) === values.config);
if (configuration === undefined)
  throw new Error(
    `--config must be one of ${configurations.map(keyOf).join(', ')}; got ${values.config}`,
  );
const port = Number(values.port);
const durationMs = Number(values.ms);
const callers = Number(values.callers);

/** A non-200 answer: an ordinary (transient) failure for every library. */
class DependencyError extends Error {
  override readonly name = 'DependencyError';
}

const agent = new Agent({ keepAlive: true, maxSockets: callers });
const call: Call = (signal) =>
  new Promise((resolve, reject) => {
    const request = get({ host: '127.0.0.1', port, path: '/', agent, signal }, (response) => {
      response.resume();
      response.on('end', () =>
        response.statusCode === 200
          ? resolve()
          : reject(new DependencyError(`status ${response.statusCode}`)),
      );
    });
    request.on('error', reject);
  });

const peers = await loadPeers(values.peers);
const operation = await configuration.build(peers);

// Warm-up: the JIT and the keep-alive sockets, outside the measured window.
await Promise.all(Array.from({ length: callers }, () => operation(call).catch(() => undefined)));
await fetch(`http://127.0.0.1:${port}/__reset`);

let gcMs = 0;
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration;
});
observer.observe({ entryTypes: ['gc'] });
let peakHeap = process.memoryUsage().heapUsed;
const heapSampler = setInterval(() => {
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
}, 100);

const latency = createHistogram();
let operations = 0;
let succeeded = 0;
let attempts = 0;
let retries = 0;
let stopped = false;
const start = performance.now();
const cpuStart = process.cpuUsage();
const stopper = setTimeout(() => (stopped = true), durationMs);

async function caller(): Promise<void> {
  while (!stopped) {
    let made = 0;
    const attempt: Call = (signal) => {
      made++;
      return call(signal);
    };
    const begun = performance.now();
    try {
      await operation(attempt);
      succeeded++;
    } catch {
      // Failures are counted by what they leave: operations − succeeded.
    }
    latency.record(Math.max(1, Math.round((performance.now() - begun) * 1000)));
    operations++;
    attempts += made;
    if (made > 1) retries += made - 1;
    // A refusal that never reached the dependency (an open breaker) settles in microtasks only: yield
    // to the event loop, or a caller spinning on it would starve the timers and sockets.
    if (made === 0) await new Promise((resolve) => setImmediate(resolve));
  }
}

await Promise.all(Array.from({ length: callers }, caller));
const wallMs = performance.now() - start;
const cpu = process.cpuUsage(cpuStart);
clearTimeout(stopper);
clearInterval(heapSampler);
peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
// gc entries arrive asynchronously: let the last ones in.
await new Promise((resolve) => setImmediate(resolve));
observer.disconnect();
agent.destroy();

console.log(
  JSON.stringify({
    config: values.config,
    node: process.version,
    peers: peers.versions,
    wallMs,
    operations,
    succeeded,
    attempts,
    retries,
    throughput: operations / (wallMs / 1000),
    p50Ms: latency.percentile(50) / 1000,
    p99Ms: latency.percentile(99) / 1000,
    gcShare: gcMs / wallMs,
    cpuUsPerOp: (cpu.user + cpu.system) / operations,
    peakHeapMb: peakHeap / 2 ** 20,
    rssMb: process.memoryUsage().rss / 2 ** 20,
  }),
);
// Timers of the libraries under test (opossum's rolling window) must not keep the run alive.
process.exit(0);
