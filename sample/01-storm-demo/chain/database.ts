/**
 * The database at the bottom of act 2's chain, a child process of its own: a plain HTTP server on
 * 127.0.0.1 behaving, for each request, as the phase of the frontend call it serves says (the phases'
 * states come in its first argument, the phase with the request) — healthy (answered after ~5 ms),
 * down (503 at once) or failing half (503 with probability 1/2, independently). Keyed by the call's
 * phase rather than by the clock, a call's retries meet the database its call met, so the phases'
 * figures do not bleed into each other. It counts every request it receives, by that phase and by
 * second of arrival.
 */
import { createServer } from 'node:http';
import { MachineMeter } from '../machine.js';
import {
  type DatabaseCounts,
  type DatabaseState,
  type FromChild,
  PHASE_HEADER,
  type ToChild,
  bump,
  phaseOf,
} from './protocol.js';

const HEALTHY_LATENCY_MS = 5;

const states = JSON.parse(process.argv[2] ?? '[]') as DatabaseState[];
let startedAt: number | undefined;
const counts: DatabaseCounts = { received: [], perSecond: [] };
const meter = new MachineMeter();
const send = (message: FromChild): void => void process.send!(message);

const server = createServer((request, response) => {
  const phase = phaseOf(request.headers[PHASE_HEADER]);
  bump(counts.received, phase);
  const state = states[phase] ?? 'healthy';
  if (startedAt !== undefined)
    bump(counts.perSecond, Math.floor((performance.now() - startedAt) / 1000));
  request.resume();
  const fails = state === 'down' || (state === 'failingHalf' && Math.random() < 0.5);
  const answer = (): void => {
    if (response.destroyed) return;
    const body = fails ? '{"error":"unavailable"}' : '{"rows":1}';
    response.writeHead(fails ? 503 : 200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    response.end(body);
  };
  if (fails) answer();
  else setTimeout(answer, HEALTHY_LATENCY_MS * (0.5 + Math.random()));
});

process.on('message', (message: ToChild) => {
  if (message.kind === 'start') {
    startedAt = performance.now();
    meter.start();
  } else if (message.kind === 'counts') send({ kind: 'counts', counts, machine: meter.stop() });
});
// The parent going away (or closing the channel) ends the process: nothing outlives the demo.
process.on('disconnect', () => process.exit(0));
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () =>
  send({ kind: 'listening', port: (server.address() as { port: number }).port }),
);
