import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  type ArgumentsHost,
  Catch,
  Controller,
  type ExceptionFilter,
  Get,
  type INestApplication,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { AppExceptionsFilter } from '../docs/examples/catch-all-filter.js';
import { CallRejectedError, DeadlineExceededError } from '../lib/nest/index.js';

/**
 * Composing with the application's own catch-all filter (issue 8 §4): registered with
 * `app.useGlobalFilters(...)`, a plain `@Catch()` filter takes the library's refusals too and, unless
 * it hands them on, answers 500 without `Retry-After`. The docs/classification.md recipe (docs/examples/catch-all-filter.ts)
 * hands them to `ResilienceExceptionFilter`.
 */
@Controller()
class RoutesController {
  @Get('refused')
  refused(): never {
    throw new CallRejectedError('DependencyUnavailable', 1500);
  }

  @Get('late')
  late(): never {
    throw new DeadlineExceededError(2000);
  }

  @Get('bug')
  bug(): never {
    throw new Error('a bug');
  }
}

/** The naive catch-all the recipe replaces. */
@Catch()
class NaiveCatchAll implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}
  catch(_exception: unknown, host: ArgumentsHost): void {
    this.adapterHost.httpAdapter.reply(
      host.switchToHttp().getResponse(),
      { statusCode: 500, message: 'handled by the app' },
      500,
    );
  }
}

async function boot(filter: (host: HttpAdapterHost) => ExceptionFilter): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({ controllers: [RoutesController] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  app.useGlobalFilters(filter(app.get(HttpAdapterHost)));
  await app.init();
  return app;
}

let recipe: INestApplication;
let naive: INestApplication;

beforeAll(async () => {
  recipe = await boot((host) => new AppExceptionsFilter(host));
  naive = await boot((host) => new NaiveCatchAll(host));
});

afterAll(async () => {
  await recipe?.close();
  await naive?.close();
});

describe('a catch-all filter beside the library', () => {
  it('without the recipe a refusal becomes a 500 without Retry-After', async () => {
    const response = await request(naive.getHttpServer()).get('/refused');
    expect([response.status, response.headers['retry-after']]).toEqual([500, undefined]);
  });

  it('with the recipe a refusal is a 503 problem+json with Retry-After, a deadline a 504, anything else the app’s', async () => {
    const refused = await request(recipe.getHttpServer()).get('/refused');
    expect([
      refused.status,
      refused.headers['retry-after'],
      refused.headers['content-type'],
    ]).toEqual([503, '2', 'application/problem+json; charset=utf-8']);
    expect(JSON.parse(refused.text)).toMatchObject({
      status: 503,
      reason: 'DependencyUnavailable',
      detail: expect.stringContaining('Try again in 2 s.'),
    });
    const late = await request(recipe.getHttpServer()).get('/late');
    expect([late.status, JSON.parse(late.text).reason]).toEqual([504, 'DeadlineExceeded']);
    const bug = await request(recipe.getHttpServer()).get('/bug');
    expect([bug.status, bug.body]).toEqual([
      500,
      { statusCode: 500, message: 'handled by the app' },
    ]);
  });
});
