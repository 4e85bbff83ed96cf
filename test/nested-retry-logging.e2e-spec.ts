import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, type INestApplication, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  type ResilientFetch,
  InjectResilientFetch,
  ResilientHttpModule,
} from '../lib/http/index.js';
import { ResilienceContextModule, ResilienceModule } from '../lib/nest/index.js';
import { LoopbackServer, answer } from './support/loopback-server.js';
import { captureLogs } from './support/log-capture.js';

/**
 * A middle hop of a chain (its caller retries: `X-NResilience-Retrying: 1`) whose calls all succeed,
 * logged through a logger that prints every level, as Nest's default logger does: under the `default`
 * profile the nested retry is one warning per (policy, host) window, never a record per call.
 */
const { records, logger: everyLevel } = captureLogs();

let dependencyUrl = '';

@Controller('lookup')
class LookupController {
  constructor(@InjectResilientFetch('db') private readonly http: ResilientFetch) {}

  @Get()
  async lookup(): Promise<{ status: number }> {
    return { status: (await this.http(`${dependencyUrl}/row`)).status };
  }
}

@Module({
  imports: [
    ResilienceModule.forRoot({ policies: { db: { attempts: 2 } } }),
    ResilientHttpModule.register({ policy: 'db' }),
    ResilienceContextModule.forRoot(),
  ],
  controllers: [LookupController],
})
class MiddleHop {}

let dependency: LoopbackServer;
let app: INestApplication;
beforeAll(async () => {
  dependency = await LoopbackServer.start((_n, _req, res) => answer(res, 200, { id: 1 }));
  dependencyUrl = dependency.url;
  const moduleRef = await Test.createTestingModule({ imports: [MiddleHop] }).compile();
  app = moduleRef.createNestApplication({ logger: everyLevel });
  await app.init();
});

afterAll(async () => {
  await app?.close();
  await dependency?.close();
});

describe('a healthy middle hop under the default logging profile', () => {
  it('200 successful calls for a retrying caller write one warning naming the host, and nothing else at any level', async () => {
    records.length = 0;
    for (let i = 0; i < 200; i++) {
      const response = await request(app.getHttpServer())
        .get('/lookup')
        .set('X-NResilience-Retrying', '1');
      expect(response.body).toEqual({ status: 200 });
    }
    expect(dependency.seen).toHaveLength(200);
    expect(records.filter(([, , context]) => context?.startsWith('NResilience'))).toEqual([
      ['warn', `[db] NestedRetry (0ms) (host ${new URL(dependencyUrl).host})`, 'NResilience.db'],
    ]);
  });
});
