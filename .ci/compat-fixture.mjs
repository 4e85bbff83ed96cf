// Runs one compatibility fixture under test/compat/<name> the way an application would use the
// package: `npm ci` from the fixture's own lock, the packed tarball installed on top (as `npm i` of
// the published package would), the fixture's own build, its own `npm test` when it has one, then the
// built app started with the fixture's Nest version and default logger and driven over real HTTP
// against a loopback dependency:
//   1. healthy: GET /checkout/1 answers 200 and the library prints nothing ("quiet when healthy");
//   2. the dependency fails: calls go on until the breaker opens; the refusal answers 503 with
//      `Retry-After` (whole seconds, within the fixture's `compat.retryAfter` range) and an
//      application/problem+json body with reason DependencyUnavailable, and the app's log has
//      "WARN [NResilience.<policy>] [<policy>] Breaker opened"; no library line but warnings all along.
// Usage: node .ci/compat-fixture.mjs test/compat/<name> [another-node-binary …]
// The fixture's package.json `compat` field says what to start and what to expect:
//   { "main": "dist/main.js", "policy": "payments", "retryAfter": [10, 10] }
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';
import { packTarball, run, tempDir } from './support.mjs';

const fixture = resolve(process.argv[2] ?? '');
const manifest = JSON.parse(readFileSync(join(fixture, 'package.json'), 'utf8'));
const expected = manifest.compat;
if (expected === undefined) throw new Error(`${fixture}/package.json has no "compat" field`);
const START_TIMEOUT_MS = 30_000;
const MAXIMUM_FAILING_CALLS = 10;

const problems = [];
const check = (ok, message) => {
  console.log(`  ${ok ? '✓' : '✗'} ${message}`);
  if (!ok) problems.push(message);
};

/** A loopback dependency: healthy JSON answers (charges and stock), or 500 for everything. */
function startDependency() {
  const state = { failing: false, requests: 0 };
  const server = createServer((request, response) => {
    state.requests++;
    if (state.failing) {
      response.statusCode = 500;
      response.end('down');
      return;
    }
    response.setHeader('content-type', 'application/json');
    const last = request.url?.split('/').pop();
    response.end(
      JSON.stringify(request.url?.startsWith('/stock/') ? { count: 7 } : { id: `ch_${last}` }),
    );
  });
  return new Promise((done) =>
    server.listen(0, '127.0.0.1', () =>
      done({ server, state, url: `http://127.0.0.1:${server.address().port}` }),
    ),
  );
}

/** Starts the built app on `node`; resolves with its port once it prints `listening on <port>`. */
function startApp(node, dependencyUrl) {
  const log = { text: '' };
  const child = spawn(node, [join(fixture, expected.main)], {
    cwd: fixture,
    env: { ...process.env, PORT: '0', PAYMENTS_URL: dependencyUrl, INVENTORY_URL: dependencyUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const started = new Promise((done, failed) => {
    const timer = setTimeout(
      () =>
        failed(
          new Error(
            `the app did not print "listening on <port>" within ${START_TIMEOUT_MS} ms:\n${log.text}`,
          ),
        ),
      START_TIMEOUT_MS,
    );
    const read = (chunk) => {
      // Nest colours its output whatever the stream; the checks read plain text.
      // eslint-disable-next-line no-control-regex -- the escape character is what is removed
      log.text += chunk.toString().replace(/\x1b\[[0-9;]*m/g, '');
      const port = /listening on (\d+)/.exec(log.text)?.[1];
      if (port !== undefined) {
        clearTimeout(timer);
        done(Number(port));
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', (code) => failed(new Error(`the app exited with code ${code}:\n${log.text}`)));
  });
  return { child, log, started };
}

async function drive(port, dependency, log) {
  const base = `http://127.0.0.1:${port}`;
  const healthyFrom = log.text.length;
  const healthy = await fetch(`${base}/checkout/1`);
  const body = await healthy.json();
  check(
    healthy.status === 200 && body.id === 'ch_1',
    `healthy call: ${healthy.status} ${JSON.stringify(body)}`,
  );

  dependency.state.failing = true;
  const healthyLog = log.text.slice(healthyFrom);
  check(
    !healthyLog.includes('NResilience'),
    `healthy call logged nothing from the library${healthyLog.includes('NResilience') ? `, but: ${healthyLog}` : ''}`,
  );

  const statuses = [];
  let refusal;
  for (let call = 2; call < 2 + MAXIMUM_FAILING_CALLS && refusal === undefined; call++) {
    const response = await fetch(`${base}/checkout/${call}`);
    statuses.push(response.status);
    if (response.status === 503)
      refusal = { headers: response.headers, body: await response.json() };
    else await response.arrayBuffer();
  }
  check(refusal !== undefined, `the breaker opened: statuses while failing ${statuses.join(', ')}`);
  if (refusal === undefined) return;
  const retryAfter = refusal.headers.get('retry-after');
  const [low, high] = expected.retryAfter;
  check(
    /^\d+$/.test(retryAfter ?? '') && Number(retryAfter) >= low && Number(retryAfter) <= high,
    `503 Retry-After: ${retryAfter} (expected ${low === high ? low : `${low}..${high}`})`,
  );
  check(
    refusal.headers.get('content-type')?.startsWith('application/problem+json') === true,
    `503 content-type: ${refusal.headers.get('content-type')}`,
  );
  check(
    refusal.body.reason === 'DependencyUnavailable' && refusal.body.status === 503,
    `503 body reason ${refusal.body.reason}, status ${refusal.body.status}`,
  );
  const opened = log.text
    .split('\n')
    .find(
      (line) =>
        line.includes(`[NResilience.${expected.policy}]`) && line.includes('Breaker opened'),
    );
  check(
    opened !== undefined && /\bWARN\b/.test(opened),
    `app log: ${opened?.trim() ?? `no "Breaker opened" line in:\n${log.text}`}`,
  );
  // The default profile writes incidents only: no traffic record at any level during the whole run.
  const quiet = log.text
    .split('\n')
    .filter((line) => line.includes('[NResilience.') && !/\bWARN\b/.test(line));
  check(
    quiet.length === 0,
    `every library line is a warning${quiet.length > 0 ? `, but: ${quiet.join('\n')}` : ''}`,
  );
}

const packDir = tempDir('pack');
try {
  const { tarball } = packTarball(packDir);
  run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: fixture });
  run('npm', ['install', '--no-save', '--no-audit', '--no-fund', tarball], { cwd: fixture });
  run('npm', ['run', 'build'], { cwd: fixture });
  if (manifest.scripts?.test !== undefined) run('npm', ['test'], { cwd: fixture });
} finally {
  rmSync(packDir, { recursive: true, force: true });
}

const nest = JSON.parse(
  readFileSync(join(fixture, 'node_modules/@nestjs/core/package.json'), 'utf8'),
).version;
// The built app also runs on every Node binary given after the fixture (.ci/run passes Node 24's and Node 22's).
for (const node of [process.execPath, ...process.argv.slice(3)]) {
  console.log(
    `\n${manifest.name}: Node ${execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()}, @nestjs/core ${nest}`,
  );
  const dependency = await startDependency();
  const app = startApp(node, dependency.url);
  try {
    await drive(await app.started, dependency, app.log);
  } finally {
    app.child.kill();
    dependency.server.close();
  }
}
console.log(
  problems.length === 0
    ? `${manifest.name}: all checks passed`
    : `${manifest.name}: ${problems.length} checks failed`,
);
process.exitCode = problems.length === 0 ? 0 : 1;
