import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Controller, Get, type INestApplication, Param } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { ResilienceModule, httpExceptionFrom } from '../lib/nest/index.js';

/** A route that passes on what a dependency answered: `/:status/:retryAfter` (`-` for no header). */
@Controller('upstream')
class PassingOnController {
  @Get(':status/:retryAfter')
  pass(@Param('status') status: string, @Param('retryAfter') retryAfter: string): never {
    const headers: Record<string, string> = retryAfter === '-' ? {} : { 'Retry-After': retryAfter };
    throw httpExceptionFrom(
      new Response(null, { status: Number(status), headers }),
      `payments answered ${status}`,
    );
  }
}

async function boot(exceptionFilter: boolean): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [ResilienceModule.forRoot({ policies: {}, exceptionFilter })],
    controllers: [PassingOnController],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

let app: INestApplication | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** Status, Retry-After, content type and body of the answer to `path`. */
async function answer(path: string): Promise<unknown[]> {
  const response = await request(app!.getHttpServer()).get(path);
  return [
    response.status,
    response.headers['retry-after'],
    response.headers['content-type']?.split(';')[0],
    response.body,
  ];
}

describe("a dependency's 429 or 503 passed on with httpExceptionFrom", () => {
  it("answers with its status, Nest's body and the Retry-After the dependency asked for", async () => {
    app = await boot(true);
    expect(await answer('/upstream/503/2')).toEqual([
      503,
      '2',
      'application/json',
      { statusCode: 503, message: 'payments answered 503' },
    ]);
    expect(await answer('/upstream/429/30')).toEqual([
      429,
      '30',
      'application/json',
      { statusCode: 429, message: 'payments answered 429' },
    ]);
  });

  it('writes whole seconds from 1 s to a day: 0 becomes 1, a week becomes 86400', async () => {
    app = await boot(true);
    expect((await answer('/upstream/503/0'))[1]).toBe('1');
    expect((await answer('/upstream/503/604800'))[1]).toBe('86400');
  });

  it('drops a malformed Retry-After and leaves every other status to Nest', async () => {
    app = await boot(true);
    const nest503 = [
      503,
      undefined,
      'application/json',
      { statusCode: 503, message: 'payments answered 503' },
    ];
    expect(await answer('/upstream/503/soon')).toEqual(nest503);
    expect(await answer('/upstream/503/-')).toEqual(nest503);
    expect(await answer('/upstream/500/2')).toEqual([
      500,
      undefined,
      'application/json',
      { statusCode: 500, message: 'payments answered 500' },
    ]);
    expect(await answer('/upstream/404/2')).toEqual([
      404,
      undefined,
      'application/json',
      { statusCode: 404, message: 'payments answered 404' },
    ]);
  });

  it("without the module's exception filter: Nest's answer, no Retry-After", async () => {
    app = await boot(false);
    expect(await answer('/upstream/503/2')).toEqual([
      503,
      undefined,
      'application/json',
      { statusCode: 503, message: 'payments answered 503' },
    ]);
  });
});
