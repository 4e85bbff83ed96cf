import 'reflect-metadata';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { PolicyRegistry, type ReloadEvent } from '../lib/nest/index.js';

/**
 * docs/configuration.md's hot-reload example, booted: a running app, its resilience.yaml edited underneath it.
 * The dependency always fails, so every attempt reaches it and is counted.
 */
const config = (attempts: number) => `policies:
  prices:
    preset: http
    attempts: ${attempts}
    backoff: { type: constant, delay: 10ms }
    breaker: { consecutiveFailures: 5, breakDuration: 30s }
`;

let dependency: Server;
let hits = 0;
let dir: string;
let app: INestApplication | undefined;

beforeAll(async () => {
  dependency = createServer((_req, res) => {
    hits++;
    res.statusCode = 500;
    res.end('down');
  });
  await new Promise<void>((resolve) => dependency.listen(0, '127.0.0.1', resolve));
  process.env.PRICES_URL = `http://127.0.0.1:${(dependency.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'nresilience-reload-e2e-'));
  process.env.RESILIENCE_CONFIG = join(dir, 'resilience.yaml');
});

afterAll(async () => {
  await app?.close();
  await new Promise((resolve) => dependency.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** Resolves with the next reload event (bounded wait: the watcher's 250 ms quiet period, on real time). */
function nextReload(registry: PolicyRegistry): Promise<ReloadEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no reload within 5 s')), 5000);
    const off = registry.onReload((event) => {
      clearTimeout(timer);
      off();
      resolve(event);
    });
  });
}

it('resilience.yaml changed under a running app: new attempts take effect, the breaker keeps its state', async () => {
  const path = process.env.RESILIENCE_CONFIG!;
  writeFileSync(path, config(3));
  const { AppModule } = await import('./fixtures/hot-reload.js');
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  const registry = app.get(PolicyRegistry);
  const breaker = registry.breaker('prices')!;

  await request(app.getHttpServer()).get('/price').expect(500);
  expect(hits).toBe(3);
  expect(breaker.snapshot().consecutiveFailures).toBe(3);

  // An invalid edit is refused: the old config (3 attempts) stays.
  let reload = nextReload(registry);
  writeFileSync(path, config(0));
  expect((await reload).kind).toBe('reloadFailed');
  expect(registry.get('prices').options.attempts).toBe(3);

  // Atomic replace with 2 attempts: applied; the breaker is the same object with the same count.
  reload = nextReload(registry);
  writeFileSync(`${path}.tmp`, config(2));
  renameSync(`${path}.tmp`, path);
  expect((await reload).kind).toBe('reloaded');
  expect(registry.breaker('prices')).toBe(breaker);
  expect(breaker.snapshot().consecutiveFailures).toBe(3);

  // Two attempts now; they are the 4th and 5th consecutive failures, so the kept breaker opens.
  await request(app.getHttpServer()).get('/price').expect(500);
  expect(hits).toBe(5);
  expect(breaker.state).toBe('open');
  const refused = await request(app.getHttpServer()).get('/price').expect(503);
  expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(15);
  expect(hits).toBe(5);
  expect(registry.reloadCounts).toEqual({ reloaded: 1, reloadFailed: 1 });
});
