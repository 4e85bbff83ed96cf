import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sources } from './support/sources.js';

const root = process.cwd();

describe('@nresilience/nestjs/redis entry', () => {
  it('exports the Redis rate store by the package name', () => {
    const script =
      "const m = await import('@nresilience/nestjs/redis'); console.log(JSON.stringify([typeof m.RedisRateStore, typeof m.connectRedisRateStore, m.RECONNECT_INTERVAL_MS]));";
    expect(JSON.parse(withoutIoredis(script, false))).toEqual(['function', 'function', 250]);
  });

  it('keeps ioredis out of every other entry: only lib/redis names it, and no other built file imports it', () => {
    const offenders = sources(join(root, 'lib'))
      .filter((file) => !file.includes(`${join('lib', 'redis')}/`))
      .filter((file) => /['"]ioredis['"]/.test(readFileSync(file, 'utf8')));
    expect(offenders).toEqual([]);
    const built = readdirSync(join(root, 'dist'), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.js') && !name.startsWith(`redis/`))
      .filter((name) => /['"]ioredis['"]/.test(readFileSync(join(root, 'dist', name), 'utf8')));
    expect(built).toEqual([]);
  });

  it('the root entry and the core load with ioredis unresolvable; the redis entry then fails naming it', () => {
    expect(
      withoutIoredis(
        "const m = await import('@nresilience/nestjs'); const c = await import('@nresilience/nestjs/core'); console.log(typeof m.ResilienceModule, typeof c.Limit.rate);",
      ),
    ).toBe('function function');
    expect(() => withoutIoredis("await import('@nresilience/nestjs/redis');")).toThrow(
      /not installed: ioredis/,
    );
  });
});

/** Runs `script` in a fresh Node process from the repo root; with `hide`, as if ioredis were not installed. */
function withoutIoredis(script: string, hide = true): string {
  const hook = `data:text/javascript,${encodeURIComponent("export async function resolve(s, c, next) { if (s === 'ioredis' || s.startsWith('ioredis/')) throw new Error('not installed: ' + s); return next(s, c); }")}`;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(hook)});`;
  const args = hide ? ['--import', `data:text/javascript,${encodeURIComponent(register)}`] : [];
  return execFileSync(process.execPath, [...args, '--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}
