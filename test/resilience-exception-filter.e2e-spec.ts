import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Controller, Get, type INestApplication, NotFoundException } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request, { type Response } from 'supertest';
import {
  CallRejectedError,
  DeadlineExceededError,
  FakeClock,
  PolicyRegistry,
  ResilienceModule,
  Resilient,
} from '../lib/nest/index.js';

let scarceCalls = 0;
let guarded: 'fail' | 'hang' = 'fail';
let releaseProbe: (() => void) | undefined;

@Controller('refuse')
class RefusingController {
  @Get('budget')
  budget(): never {
    throw new CallRejectedError('BudgetExhausted', 1200, { policy: 'payments' });
  }

  @Get('breaker')
  breaker(): never {
    throw new CallRejectedError('DependencyUnavailable', undefined);
  }

  @Get('deadline')
  deadline(): never {
    throw new DeadlineExceededError(1000);
  }

  @Get('missing')
  missing(): never {
    throw new NotFoundException('no such order');
  }

  @Get('guarded')
  @Resilient('guarded')
  async guarded(): Promise<string> {
    if (guarded === 'fail') throw new Error('dependency down');
    return new Promise<string>((resolve) => (releaseProbe = () => resolve('probe answered')));
  }

  @Get('scarce')
  @Resilient('scarce')
  async scarce(): Promise<string> {
    scarceCalls++;
    throw new Error('dependency down');
  }
}

const clock = new FakeClock();

async function boot(exceptionFilter: boolean): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({
        policies: {
          scarce: {
            attempts: 3,
            backoff: { type: 'none' },
            budget: { fraction: 0, minimumPerSecond: 1 },
          },
          guarded: {
            attempts: 1,
            budget: false,
            breaker: {
              consecutiveFailures: 5,
              failureRateFloor: 0,
              breakDuration: '3s',
              jitter: 'none',
              probeTimeout: '10s',
            },
          },
        },
        clock,
        exceptionFilter,
      }),
    ],
    controllers: [RefusingController],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

function expectProblem(response: Response, status: number, reason: string): void {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toEqual({
    type: expect.stringMatching(/^urn:nresilience:problem:/),
    title: expect.any(String),
    status,
    detail: expect.any(String),
    reason,
  });
  expect(response.text).not.toMatch(/stack|at .*\.ts:|payments/);
}

let app: INestApplication | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('ResilienceExceptionFilter registered by forRoot({ exceptionFilter: true })', () => {
  it('answers a refusal with 503, Retry-After in whole seconds rounded up, and a problem document', async () => {
    app = await boot(true);
    const response = await request(app.getHttpServer()).get('/refuse/budget');
    expectProblem(response, 503, 'BudgetExhausted');
    expect(response.headers['retry-after']).toBe('2');
    expect(response.body.type).toBe('urn:nresilience:problem:call-rejected');
  });

  it('omits Retry-After when the refusal carries no hint', async () => {
    app = await boot(true);
    const response = await request(app.getHttpServer()).get('/refuse/breaker');
    expectProblem(response, 503, 'DependencyUnavailable');
    expect(response.headers['retry-after']).toBeUndefined();
  });

  it('answers an exceeded deadline with 504', async () => {
    app = await boot(true);
    const response = await request(app.getHttpServer()).get('/refuse/deadline');
    expectProblem(response, 504, 'DeadlineExceeded');
    expect(response.body.type).toBe('urn:nresilience:problem:deadline-exceeded');
    expect(response.headers['retry-after']).toBeUndefined();
  });

  it('leaves other exceptions to Nest', async () => {
    app = await boot(true);
    const response = await request(app.getHttpServer()).get('/refuse/missing').expect(404);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
  });

  it('turns a real budget refusal from a @Resilient handler into 503 with the bucket hint', async () => {
    app = await boot(true);
    const bucket = app.get(PolicyRegistry).bucket('scarce')!;
    while (bucket.tryAcquire());
    expect(bucket.level).toBe(0);
    scarceCalls = 0;
    let settled = false;
    const pending = request(app.getHttpServer())
      .get('/refuse/scarce')
      .then((response) => {
        settled = true;
        return response;
      });
    // The refusal is reported after the 100 ms guarded pause, timed on the fake clock.
    for (let i = 0; i < 200 && !settled; i++) await clock.advance(10);
    const response = await pending;
    expectProblem(response, 503, 'BudgetExhausted');
    expect(scarceCalls).toBe(1);
    // After the pause the floor (1 token/s) accrued about 0.1 token; the missing ~0.9 s rounds up to 1.
    expect(response.headers['retry-after']).toBe('1');
  });
});

describe('a breaker refusal while half-open with the probe out', () => {
  it('answers every refused request 503 with Retry-After: the break last served (3 s), shorter than the probe timeout left', async () => {
    app = await boot(true);
    guarded = 'fail';
    for (let i = 0; i < 5; i++)
      expect((await request(app.getHttpServer()).get('/refuse/guarded')).status).toBe(500);
    expect(app.get(PolicyRegistry).breaker('guarded')!.state).toBe('open');
    await clock.advance(3000);
    guarded = 'hang';
    const probe = request(app.getHttpServer())
      .get('/refuse/guarded')
      .then((response) => response);
    for (let i = 0; i < 2000 && releaseProbe === undefined; i++)
      await new Promise((resolve) => setTimeout(resolve, 1));
    const timersBefore = clock.pending;
    const refused = Array.from({ length: 40 }, () =>
      request(app!.getHttpServer())
        .get('/refuse/guarded')
        .then((response) => response),
    );
    // Each refused request waits out the guarded pause on the fake clock: wait until all 40 are there.
    for (let i = 0; i < 5000 && clock.pending < timersBefore + 40; i++)
      await new Promise((resolve) => setTimeout(resolve, 1));
    await clock.advance(100);
    const answers = await Promise.all(refused);
    expect(
      answers.map((response) => [
        response.status,
        response.headers['retry-after'],
        response.body.reason,
      ]),
    ).toEqual(Array.from({ length: 40 }, () => [503, '3', 'DependencyUnavailable']));
    releaseProbe!();
    expect((await probe).status).toBe(200);
  });
});

describe('without the exceptionFilter option', () => {
  it('registers no filter: Nest answers 500', async () => {
    app = await boot(false);
    const response = await request(app.getHttpServer()).get('/refuse/budget').expect(500);
    expect(response.headers['retry-after']).toBeUndefined();
  });
});
