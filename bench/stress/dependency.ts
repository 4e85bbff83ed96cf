/**
 * The stress suite's dependency (issue 15): an HTTP server on loopback in a process of its own, so
 * what it costs is not billed to the client under test. `--fail-rate r` answers that share of
 * requests `503` (chosen by a seeded xorshift, so a run is repeatable), the rest `200`. It counts every
 * request it receives; `GET /__stats` answers the counts as JSON, `GET /__reset` zeroes them (the
 * client's warm-up is not billed); neither is counted.
 *
 * Prints `{"port": n}` on stdout once listening; exits on SIGTERM.
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    'fail-rate': { type: 'string', default: '0' },
    seed: { type: 'string', default: '1' },
  },
});
const failRate = Number(values['fail-rate']);
if (!(failRate >= 0 && failRate <= 1))
  throw new Error(`--fail-rate must be in [0, 1], got ${values['fail-rate']}`);

let state = Number(values.seed) >>> 0 || 1;
function random(): number {
  // xorshift32: a fixed sequence per seed, no allocation.
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  return (state >>> 0) / 4_294_967_296;
}

const counts = { requests: 0, failed: 0 };
const server = createServer((request, response) => {
  if (request.url === '/__reset') {
    counts.requests = 0;
    counts.failed = 0;
    response.end();
    return;
  }
  if (request.url === '/__stats') {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify(counts));
    return;
  }
  counts.requests++;
  if (random() < failRate) {
    counts.failed++;
    response.statusCode = 503;
    response.end('unavailable');
  } else response.end('ok');
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(
    JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0 }),
  );
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
