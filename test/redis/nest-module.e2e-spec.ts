import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { PolicyRegistry, ResilienceModule } from '../../lib/nest/index.js';
import { STORE_CLIENT_OPTIONS } from '../../lib/redis/index.js';
import { type TestRedis, startRedis } from '../support/redis-server.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis.stop());

const policies = (key: string) => ({
  openai: { attempts: 1, limit: { rate: { limit: 20, per: 1000, burst: 10, shared: true, key } } },
});

async function app(options: Parameters<typeof ResilienceModule.forRoot>[0]) {
  const moduleRef = await Test.createTestingModule({
    imports: [ResilienceModule.forRoot(options)],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

/** Connections Redis holds now (CLIENT LIST), the asking one included. */
async function connections(): Promise<number> {
  const probe = new Redis(redis.url);
  try {
    return ((await probe.client('LIST')) as string).trim().split('\n').length;
  } finally {
    probe.disconnect();
  }
}

describe('ResilienceModule.forRoot({ redis }) with limit.rate.shared: true, against a real Redis', () => {
  it('{ url }: two applications share the 20/s limit (burst 10): their 20th call needs 0.5 s, not the instant two separate limits would; the connection is quit on close', async () => {
    const key = `nest-${process.pid}-${Date.now()}`;
    const before = await connections();
    const apps = [
      await app({ redis: { url: redis.url }, policies: policies(key) }),
      await app({ redis: { url: redis.url }, policies: policies(key) }),
    ];
    expect(await connections()).toBe(before + 2);
    const handles = apps.map((moduleRef) => moduleRef.get(PolicyRegistry).handle('openai'));
    let ran = 0;
    let twentiethAt = Number.POSITIVE_INFINITY;
    const started = performance.now();
    const work = () => {
      if (++ran === 20) twentiethAt = performance.now() - started;
      return Promise.resolve();
    };
    // Every 5 ms each application offers a call (2 × 200/s) until 20 have run. A loaded machine only
    // offers fewer calls, so it can make the 20th later, never earlier: the lower bound holds under load.
    const calls: Promise<unknown>[] = [];
    while (ran < 20 && performance.now() - started < 10_000) {
      for (const handle of handles) calls.push(handle.tryRun(work));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(calls);
    // Shared: burst 10 + 20/s, so the 20th needs t >= 0.5 s (100 ms of slack for Redis's clock and
    // ours). Two separate limits would run 20 at once (2 × burst 10).
    expect(twentiethAt).toBeGreaterThanOrEqual(400);
    expect(twentiethAt).toBeLessThan(10_000);
    const reading = apps[0]!.get(PolicyRegistry).get('openai').limiter()!.snapshot();
    expect(reading.kind === 'rate' && reading.shared).toMatchObject({
      store: 'redis',
      key,
      state: 'ready',
      degraded: false,
    });
    await Promise.all(apps.map((moduleRef) => moduleRef.close()));
    expect(await connections()).toBe(before);
  });

  it("{ client }: uses the application's own client and leaves it open on close", async () => {
    const client = new Redis(redis.url, { ...STORE_CLIENT_OPTIONS });
    client.on('error', () => undefined);
    await new Promise((resolve) => client.once('ready', resolve));
    const moduleRef = await app({ redis: { client }, policies: policies(`own-${Date.now()}`) });
    const result = await moduleRef
      .get(PolicyRegistry)
      .handle('openai')
      .tryRun(() => 'ok');
    expect(result.value).toBe('ok');
    await moduleRef.close();
    expect(client.status).toBe('ready');
    await client.quit();
  });

  it('the docs/rate-limits.md module boots against REDIS_URL with openai shared through Redis', async () => {
    process.env.REDIS_URL = redis.url;
    const { AppModule } = await import('../../docs/examples/rate-limits-nest.js');
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await moduleRef.init();
    const reading = moduleRef.get(PolicyRegistry).get('openai').limiter()!.snapshot();
    expect(
      reading.kind === 'rate' && [reading.limit, reading.burst, reading.shared?.state],
    ).toEqual([500, 50, 'ready']);
    await moduleRef.close();
  });

  it('a bad redis option stops start-up naming the field, the value and the rule', async () => {
    await expect(
      app({ redis: { url: 'http://x', connectWait: -1 } as never, policies: {} }),
    ).rejects.toThrow(
      /redis\.url: "http:\/\/x" is invalid: must be a redis:\/\/ or rediss:\/\/ URL[\s\S]*redis\.connectWait: -1/,
    );
  });

  it('limit.rate.shared: true without a redis option stops start-up naming it', async () => {
    await expect(app({ policies: policies('none') })).rejects.toThrow(
      /policies\.openai\.limit\.rate\.shared: true is invalid: needs a store/,
    );
  });
});
