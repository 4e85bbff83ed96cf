import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Module } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { ResilienceHealthIndicator } from '../../lib/health/index.js';
import { type ResilientFetch, ResilientHttpModule, getResilientFetchToken } from '../../lib/http/index.js';
import { PolicyRegistry, ResilienceModule } from '../../lib/nest/index.js';
import { answer, loopbackServers, reset } from '../support/loopback-server.js';

const { serve, closeAll } = loopbackServers();
afterEach(closeAll);

async function boot(policy: string) {
  @Module({
    imports: [
      ResilienceModule.forRoot({ policies: { api: { attempts: 1, breaker: { consecutiveFailures: 2 } } }, logging: 'off', telemetry: false }),
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
      expect(((await http(`${dead.url}/x`).catch((e: unknown) => e)) as Error).name).toBe('CallRejectedError');
      expect((await http(`${healthy.url}/x`)).status).toBe(200);
      expect(dead.seen).toHaveLength(2);
      expect(http.hosts.unhealthy()).toEqual([new URL(dead.url).origin]);
      expect(app.get(PolicyRegistry).breaker('api')?.snapshot().state).toBe('closed');
      // Health lists the hosts, the one with an open breaker first, and stays up (degraded, not down).
      const health = new ResilienceHealthIndicator(new HealthIndicatorService(), app.get(PolicyRegistry)).isHealthy('resilience', { scopes: { api: http.hosts } });
      const api = health.resilience.api as { keys: Record<string, { status: string; breaker: string }>; keysDegraded: number };
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

  it('fails app.init() for a policy name that is not registered', async () => {
    await expect(boot('paymnets')).rejects.toThrow(/paymnets/);
  });
});
