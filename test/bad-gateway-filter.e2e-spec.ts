import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Controller, Get, type INestApplication, NotFoundException } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { captureLogs } from './support/log-capture.js';
import {
  CallRejectedError,
  FakeClock,
  ResilienceBadGatewayFilter,
  ResilienceModule,
  type ResilienceForRootOptions,
  Resilient,
  Verdict,
  Classifier,
} from '../lib/nest/index.js';

// The opt-in 502 of DESIGN §4: attempts exhausted on the work's own error → 502 + problem+json.

const counts = { flaky: 0, answer: 0 };

@Controller()
class GatewayController {
  @Get('flaky')
  @Resilient('inventory')
  async flaky(): Promise<string> {
    counts.flaky++;
    throw new Error('connection reset by inventory');
  }

  @Get('answer')
  @Resilient('inventory')
  async answer(): Promise<string> {
    counts.answer++;
    throw new NotFoundException('no such item');
  }

  @Get('rule')
  @Resilient('inventory', {
    classifier: Classifier.forErrors(Classifier.when(SyntaxError, Verdict.permanent)),
  })
  async rule(): Promise<string> {
    throw new SyntaxError('bad payload');
  }

  @Get('plain')
  plain(): never {
    throw new Error('a bug of this service');
  }

  @Get('refused')
  refused(): never {
    throw new CallRejectedError('BudgetExhausted', 1200);
  }
}

let app: INestApplication | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const { records, logger: capture } = captureLogs();

async function boot(
  exceptionFilter: ResilienceForRootOptions['exceptionFilter'],
  attempts = 3,
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({
        policies: { inventory: { attempts, backoff: { type: 'none' } } },
        clock: new FakeClock(),
        exceptionFilter,
      }),
    ],
    controllers: [GatewayController],
  }).compile();
  records.length = 0;
  const started = moduleRef.createNestApplication({ logger: capture });
  await started.init();
  return started;
}

describe('forRoot({ exceptionFilter: { badGateway: true } })', () => {
  it('answers 502 with the problem document, no Retry-After, when the attempts ran out on the work’s own error', async () => {
    app = await boot({ badGateway: true });
    counts.flaky = 0;
    const response = await request(app.getHttpServer()).get('/flaky');
    expect(counts.flaky).toBe(3);
    expect(response.status).toBe(502);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.headers['retry-after']).toBeUndefined();
    expect(response.body).toEqual({
      type: 'urn:nresilience:problem:attempts-exhausted',
      title: 'Bad Gateway',
      status: 502,
      detail: 'A dependency of this service failed on every attempt allowed for this request.',
      reason: 'AttemptsExhausted',
    });
    expect(response.text).not.toContain('connection reset');
    // One warning a person can act on, naming the policy, the method and the cause; never a stack.
    expect(records.filter(([level]) => level === 'warn' || level === 'error')).toEqual([
      [
        'warn',
        '[inventory] dependency GatewayController.flaky failed on every attempt allowed: Error; answered 502',
        'NResilience.inventory',
      ],
    ]);
  });

  it('one attempt that failed is attempts exhausted too', async () => {
    app = await boot({ badGateway: true }, 1);
    expect((await request(app.getHttpServer()).get('/flaky')).status).toBe(502);
  });

  it('leaves answers, permanent verdicts and errors no call rejected with to Nest, and keeps 503 for refusals', async () => {
    app = await boot({ badGateway: true });
    counts.answer = 0;
    const answer = await request(app.getHttpServer()).get('/answer');
    expect([answer.status, answer.body, counts.answer]).toEqual([
      404,
      { statusCode: 404, message: 'no such item', error: 'Not Found' },
      1,
    ]);
    const rule = await request(app.getHttpServer()).get('/rule');
    expect([rule.status, rule.body]).toEqual([
      500,
      { statusCode: 500, message: 'Internal server error' },
    ]);
    const plain = await request(app.getHttpServer()).get('/plain');
    expect([plain.status, plain.body]).toEqual([
      500,
      { statusCode: 500, message: 'Internal server error' },
    ]);
    const refused = await request(app.getHttpServer()).get('/refused');
    expect([refused.status, refused.headers['retry-after'], refused.body.reason]).toEqual([
      503,
      '2',
      'BudgetExhausted',
    ]);
  });

  it('by default (exceptionFilter: true) attempts exhausted keep Nest’s usual 500', async () => {
    app = await boot(true);
    counts.flaky = 0;
    const response = await request(app.getHttpServer()).get('/flaky');
    expect([response.status, response.body, counts.flaky]).toEqual([
      500,
      { statusCode: 500, message: 'Internal server error' },
      3,
    ]);
  });

  it('works registered by hand with app.useGlobalFilters', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          policies: { inventory: { attempts: 2, backoff: { type: 'none' } } },
          clock: new FakeClock(),
        }),
      ],
      controllers: [GatewayController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useGlobalFilters(new ResilienceBadGatewayFilter(app.get(HttpAdapterHost)));
    await app.init();
    expect((await request(app.getHttpServer()).get('/flaky')).status).toBe(502);
    expect((await request(app.getHttpServer()).get('/answer')).status).toBe(404);
  });

  it('refuses a bad exceptionFilter value naming it', () => {
    expect(() =>
      ResilienceModule.forRoot({ policies: {}, exceptionFilter: { badGatway: true } as never }),
    ).toThrow(
      'exceptionFilter.badGatway: true is invalid: is not a known exceptionFilter option (badGateway)',
    );
    expect(() =>
      ResilienceModule.forRoot({ policies: {}, exceptionFilter: 'yes' as never }),
    ).toThrow('exceptionFilter: "yes" is invalid: must be true, false or { badGateway?: boolean }');
  });
});
