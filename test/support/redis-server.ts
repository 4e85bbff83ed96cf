import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createConnection, createServer } from 'node:net';

/**
 * A Redis for the wire tests: `REDIS_URL` when it is set (an existing server; it cannot be killed),
 * else a real `redis-server` (Debian's package, installed by `scripts/ensure-redis.sh`, which
 * `npm test` runs first) started on a free loopback port, without persistence, and stopped by `stop()`.
 */
export interface TestRedis {
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** Whether it is a `redis-server` this process started (so `kill` and `restart` work). */
  readonly owned: boolean;
  /** Kills the server at once (SIGKILL, as a crash): connections drop, nothing is saved. */
  kill(): Promise<void>;
  /** Starts the server again on the same port (empty) and waits until it answers PING. */
  restart(): Promise<void>;
  /** Stops the server (when this process started it) and waits for it to exit. */
  stop(): Promise<void>;
}

/** Starts a Redis for a test file (see {@link TestRedis}). */
export async function startRedis(options: { own?: boolean } = {}): Promise<TestRedis> {
  const external = process.env.REDIS_URL;
  if (external !== undefined && external !== '' && options.own !== true) {
    return {
      url: external,
      owned: false,
      kill: () => Promise.reject(new Error('REDIS_URL is an existing server: it is not killed')),
      restart: () => Promise.reject(new Error('REDIS_URL is an existing server')),
      stop: () => Promise.resolve(),
    };
  }
  const port = await freePort();
  let child: ChildProcess | undefined = await launch(port);
  const stopChild = async (signal: NodeJS.Signals): Promise<void> => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = once(running, 'exit');
    running.kill(signal);
    await exited;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    owned: true,
    kill: () => stopChild('SIGKILL'),
    restart: async () => {
      await stopChild('SIGKILL');
      child = await launch(port);
    },
    stop: () => stopChild('SIGTERM'),
  };
}

/** A loopback port free now. */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** Spawns `redis-server` on `port` and resolves once it answers PING (within 5 s). */
async function launch(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--loglevel',
      'warning',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const failed = new Promise<never>((_resolve, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          error.code === 'ENOENT'
            ? 'redis-server is not installed: run scripts/ensure-redis.sh (npm test does), or set REDIS_URL'
            : `redis-server failed to start: ${error.message}`,
        ),
      ),
    );
    child.once('exit', (code) =>
      reject(new Error(`redis-server exited (${String(code)}) on port ${port}: ${stderr}`)),
    );
  });
  failed.catch(() => undefined);
  const started = Date.now();
  for (;;) {
    if (await answersPing(port)) return child;
    if (Date.now() - started > 5000) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not answer on port ${port} within 5 s: ${stderr}`);
    }
    await Promise.race([failed, new Promise((resolve) => setTimeout(resolve, 20))]);
  }
}

/** Whether a Redis on `port` answers `PING` with `+PONG`. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    socket.setTimeout(500, () => socket.destroy());
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) socket.end();
    });
    socket.once('error', () => undefined);
    socket.once('close', () => resolve(reply.startsWith('+PONG')));
  });
}
