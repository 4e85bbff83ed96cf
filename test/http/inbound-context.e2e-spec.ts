import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Body,
  Controller,
  Get,
  type INestApplication,
  type LoggerService,
  Module,
  Post,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Ambient } from '../../lib/core/index.js';
import {
  type ResilientFetch,
  InjectResilientFetch,
  ResilientHttpModule,
} from '../../lib/http/index.js';
import { ResilienceContextModule, ResilienceModule } from '../../lib/nest/index.js';
import { LoopbackServer, answer } from '../support/loopback-server.js';

/** What a handler saw of the ambient context. */
interface Seen {
  remaining: number | undefined;
  nestedRetry: boolean | undefined;
  criticality: string;
}

function seen(): Seen {
  return {
    remaining: Ambient.remaining(),
    nestedRetry: Ambient.current()?.nestedRetry,
    criticality: Ambient.criticality(),
  };
}

/** Collects warnings, where the library logs nestedRetry incidents. */
class Warnings implements LoggerService {
  readonly lines: string[] = [];
  log(): void {}
  error(): void {}
  warn(message: unknown): void {
    this.lines.push(String(message));
  }
}

let dependencyUrl = '';
let serviceBUrl = '';

/** Service B: calls the dependency through the resilient fetch; its policy honours the caller's deadline. */
@Controller('work')
class WorkController {
  constructor(@InjectResilientFetch('dependency') private readonly http: ResilientFetch) {}

  @Get()
  async get(): Promise<Seen & { dependency: number }> {
    const inbound = seen();
    const response = await this.http(`${dependencyUrl}/data`);
    return { ...inbound, dependency: response.status };
  }

  @Post()
  post(@Body() body: { n: number }): Seen & { n: number } {
    return { ...seen(), n: body.n };
  }
}

@Controller('health')
class HealthController {
  @Get()
  get(): Seen {
    return seen();
  }
}

@Module({
  imports: [
    ResilienceModule.forRoot({
      policies: { dependency: { attempts: 2, deadline: '5s', useAmbientDeadline: true } },
    }),
    ResilientHttpModule.register({ policy: 'dependency' }),
    ResilienceContextModule.forRoot({ rejectExpired: { reserve: 20 }, exclude: ['health'] }),
  ],
  controllers: [WorkController, HealthController],
})
class ServiceB {}

/** Service A: the edge; calls B with 3 attempts and a 2 s deadline, bounded by its own caller too. */
@Controller('start')
class StartController {
  constructor(@InjectResilientFetch('b') private readonly http: ResilientFetch) {}

  @Get()
  async start(): Promise<{ a: Seen; b: unknown }> {
    const a = seen();
    const response = await this.http(`${serviceBUrl}/api/work`);
    return { a, b: await response.json() };
  }
}

@Module({
  imports: [
    ResilienceModule.forRoot({
      policies: { b: { attempts: 3, deadline: '2s', useAmbientDeadline: true } },
    }),
    ResilientHttpModule.register({ policy: 'b' }),
    ResilienceContextModule.forRoot(),
  ],
  controllers: [StartController],
})
class ServiceA {}

describe.each(['express', 'fastify'] as const)(
  'inbound context on %s: A calls B, B calls a dependency',
  (platform) => {
    let dependency: LoopbackServer;
    let a: INestApplication;
    let b: INestApplication;
    let aUrl = '';
    const warnings = new Warnings();

    async function boot(
      module: unknown,
      logger: LoggerService | false,
    ): Promise<[INestApplication, string]> {
      const app =
        platform === 'fastify'
          ? await NestFactory.create(module as never, new FastifyAdapter(), {
              logger,
              abortOnError: false,
            })
          : await NestFactory.create(module as never, { logger, abortOnError: false });
      app.setGlobalPrefix('api');
      await app.listen(0, '127.0.0.1');
      return [app, (await app.getUrl()).replace('[::1]', '127.0.0.1')];
    }

    beforeAll(async () => {
      dependency = await LoopbackServer.start((_n, _req, res) => answer(res, 200, { ok: true }));
      dependencyUrl = dependency.url;
      [b, serviceBUrl] = await boot(ServiceB, warnings);
      // Nest's logger is process-wide: both apps write to the same one.
      [a, aUrl] = await boot(ServiceA, warnings);
    });

    afterAll(async () => {
      await a?.close();
      await b?.close();
      await dependency?.close();
    });

    it('shrinks the deadline at every hop and carries the nested-retry marker', async () => {
      dependency.seen.length = 0;
      const response = await fetch(`${aUrl}/api/start`, {
        headers: { 'x-nresilience-remaining-ms': '1500', 'x-nresilience-criticality': 'sheddable' },
      });
      const body = (await response.json()) as { a: Seen; b: Seen & { dependency: number } };
      expect(response.status).toBe(200);
      // A's caller has 1500 ms left; A's handler sees at most that.
      expect(body.a.remaining).toBeLessThanOrEqual(1500);
      expect(body.a.remaining).toBeGreaterThan(1000);
      expect(body.a.criticality).toBe('sheddable');
      expect(body.a.nestedRetry).toBe(false);
      // B is inside A's retrying client and has less time than A had.
      expect(body.b.nestedRetry).toBe(true);
      expect(body.b.remaining).toBeLessThanOrEqual(body.a.remaining!);
      expect(body.b.dependency).toBe(200);
      // The dependency got B's remaining time, tighter still, and B's own marker.
      const sent = dependency.seen[0]!.headers;
      expect(Number(sent['x-nresilience-remaining-ms'])).toBeLessThanOrEqual(body.b.remaining!);
      expect(sent['x-nresilience-retrying']).toBe('1');
      // B's outbound call was made for a retrying caller: a nestedRetry incident at warn, naming the host.
      expect(warnings.lines.filter((line) => line.includes('NestedRetry'))).toEqual([
        `[dependency] NestedRetry (0ms) (host ${new URL(dependency.url).host})`,
      ]);
    });

    it('keeps the context for a POST with a body', async () => {
      const response = await fetch(`${serviceBUrl}/api/work`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-nresilience-remaining-ms': '900',
          'x-nresilience-retrying': '1',
        },
        body: JSON.stringify({ n: 7 }),
      });
      const body = (await response.json()) as Seen & { n: number };
      expect([response.status, body.n, body.nestedRetry]).toEqual([201, 7, true]);
      expect(body.remaining).toBeLessThanOrEqual(900);
      expect(body.remaining).toBeGreaterThan(500);
    });

    it('answers 504 problem+json before the handler when less than the reserve is left', async () => {
      dependency.seen.length = 0;
      const response = await fetch(`${serviceBUrl}/api/work`, {
        headers: { 'x-nresilience-remaining-ms': '5' },
      });
      expect(response.status).toBe(504);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(await response.json()).toMatchObject({
        status: 504,
        reason: 'DeadlineExceeded',
        type: 'urn:nresilience:problem:deadline-exceeded',
      });
      expect(dependency.seen).toHaveLength(0);
    });

    it('ignores malformed values, never raises criticality past critical, and skips excluded routes', async () => {
      for (const value of ['-1', 'abc', '99999999999']) {
        const response = await fetch(`${serviceBUrl}/api/work`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-nresilience-remaining-ms': value,
            'x-nresilience-criticality': 'criticalPlus',
          },
          body: '{"n":1}',
        });
        // JSON drops the undefined remaining time: no deadline was read.
        expect(await response.json()).toEqual({
          n: 1,
          criticality: 'critical',
          nestedRetry: false,
        });
      }
      const health = await fetch(`${serviceBUrl}/api/health`, {
        headers: { 'x-nresilience-remaining-ms': '5', 'x-nresilience-retrying': '1' },
      });
      expect([health.status, await health.json()]).toEqual([200, { criticality: 'critical' }]);
    });
  },
);

describe('ResilienceContextModule.forRoot options', () => {
  it('says the rule of a bad rejectExpired.reserve', () => {
    const rule = 'must be a duration in ms >= 0 (or Infinity)';
    expect(() => ResilienceContextModule.forRoot({ rejectExpired: { reserve: -5 } })).toThrow(
      `rejectExpired.reserve: -5 is invalid: ${rule}`,
    );
    expect(() =>
      ResilienceContextModule.forRoot({ rejectExpired: { reserve: '50ms' as never } }),
    ).toThrow(`rejectExpired.reserve: "50ms" is invalid: ${rule}`);
    expect(ResilienceContextModule.forRoot({ rejectExpired: { reserve: 0 } }).module).toBe(
      ResilienceContextModule,
    );
  });
});
