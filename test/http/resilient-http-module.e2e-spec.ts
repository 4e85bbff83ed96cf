import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Module } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { ResilienceHealthIndicator } from '../../lib/health/index.js';
import {
  type ResilientFetch,
  ResilientHttpModule,
  createResilientFetch,
  getResilientFetchToken,
} from '../../lib/http/index.js';
import { PolicyRegistry, type ResilienceConfig, ResilienceModule } from '../../lib/nest/index.js';
import { answer, loopbackServers, reset } from '../support/loopback-server.js';

const { serve, closeAll } = loopbackServers();
afterEach(closeAll);

const API = { attempts: 1, breaker: { consecutiveFailures: 2, breakDuration: 60_000 } };

/** An app whose registry reads `source.config` (so `registry.refresh()` reads it again). */
async function boot(
  policy: string,
  source: { config: ResilienceConfig } = { config: { policies: { api: API } } },
) {
  @Module({
    imports: [
      ResilienceModule.forRoot({
        configSource: { read: () => source.config },
        logging: 'off',
        telemetry: false,
      }),
      ResilientHttpModule.register({ policy }),
    ],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

describe('ResilientHttpModule', () => {
  it('gives every host its own breaker, not the one pinned to the policy name', async () => {
    const dead = await serve((_n, req) => reset(req));
    const healthy = await serve((_n, _req, res) => answer(res, 200, { ok: true }));
    const app = await boot('api');
    try {
      const http = app.get<ResilientFetch>(getResilientFetchToken('api'));
      for (let i = 0; i < 2; i++) await http(`${dead.url}/x`).catch(() => undefined);
      expect(((await http(`${dead.url}/x`).catch((e: unknown) => e)) as Error).name).toBe(
        'CallRejectedError',
      );
      expect((await http(`${healthy.url}/x`)).status).toBe(200);
      expect(dead.seen).toHaveLength(2);
      expect(http.hosts.unhealthy()).toEqual([new URL(dead.url).origin]);
      expect(app.get(PolicyRegistry).breaker('api')?.snapshot().state).toBe('closed');
      // Health lists the hosts, the one with an open breaker first, and stays up (degraded, not down).
      const health = new ResilienceHealthIndicator(
        new HealthIndicatorService(),
        app.get(PolicyRegistry),
      ).isHealthy('resilience', { scopes: { api: http.hosts } });
      const api = health.resilience.api as {
        keys: Record<string, { status: string; breaker: string }>;
        keysDegraded: number;
      };
      expect(health.resilience.status).toBe('up');
      expect(api.keysDegraded).toBe(1);
      expect(Object.entries(api.keys).map(([key, k]) => [key, k.status, k.breaker])).toEqual([
        [new URL(dead.url).origin, 'degraded', 'open'],
        [new URL(healthy.url).origin, 'ok', 'closed'],
      ]);
    } finally {
      await app.close();
    }
  });

  it('a host breaker opened stays open across an identical reload, a reload of another policy and refresh(); a changed config keeps it under the new settings', async () => {
    const dead = await serve((_n, req) => reset(req));
    const source = {
      config: { policies: { api: API, other: { attempts: 2 } } } as ResilienceConfig,
    };
    const app = await boot('api', source);
    try {
      const http = app.get<ResilientFetch>(getResilientFetchToken('api'));
      const registry = app.get(PolicyRegistry);
      for (let i = 0; i < 2; i++) await http(`${dead.url}/x`).catch(() => undefined);
      const origin = new URL(dead.url).origin;
      const breaker = http.hosts.for(origin).breaker()!;
      expect(breaker.state).toBe('open');
      const refusedNow = async () => {
        const error = (await http(`${dead.url}/x`).catch((e: unknown) => e)) as {
          name: string;
          reason: string;
        };
        return [error.name, error.reason];
      };
      registry.reload(source.config);
      expect(await refusedNow()).toEqual(['CallRejectedError', 'DependencyUnavailable']);
      registry.reload({ policies: { api: API, other: { attempts: 3 } } });
      expect(await refusedNow()).toEqual(['CallRejectedError', 'DependencyUnavailable']);
      await registry.refresh();
      expect(await refusedNow()).toEqual(['CallRejectedError', 'DependencyUnavailable']);
      expect(dead.seen).toHaveLength(2);
      // A changed config: same breaker (still open, its break still running), new settings.
      registry.reload({ policies: { api: { ...API, attempts: 2 } } });
      expect(await refusedNow()).toEqual(['CallRejectedError', 'DependencyUnavailable']);
      expect([
        http.hosts.for(origin).options.attempts,
        http.hosts.for(origin).breaker(),
        breaker.state,
      ]).toEqual([2, breaker, 'open']);
      expect(dead.seen).toHaveLength(2);
      expect(registry.reloadCounts).toEqual({ reloaded: 4, reloadFailed: 0 });
    } finally {
      await app.close();
    }
  });

  it('createResilientFetch given registry.handle(name) keeps a breaker per host, following reloads', async () => {
    const dead = await serve((_n, req) => reset(req));
    const healthy = await serve((_n, _req, res) => answer(res, 200, { ok: true }));
    const registry = PolicyRegistry.create({ policies: { api: API } });
    const http = createResilientFetch({ policy: registry.handle('api') });
    for (let i = 0; i < 2; i++) await http(`${dead.url}/x`).catch(() => undefined);
    expect(((await http(`${dead.url}/x`).catch((e: unknown) => e)) as Error).name).toBe(
      'CallRejectedError',
    );
    expect((await http(`${healthy.url}/x`)).status).toBe(200);
    expect(registry.breaker('api')!.state).toBe('closed');
    registry.reload({ policies: { api: { ...API, attempts: 2 } } });
    expect(((await http(`${dead.url}/x`).catch((e: unknown) => e)) as Error).name).toBe(
      'CallRejectedError',
    );
    expect(http.hosts.unhealthy()).toEqual([new URL(dead.url).origin]);
    expect([dead.seen.length, healthy.seen.length]).toEqual([2, 1]);
  });

  it('fails app.init() for a policy name that is not registered', async () => {
    await expect(boot('paymnets')).rejects.toThrow(/paymnets/);
  });
});
