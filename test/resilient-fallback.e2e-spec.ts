import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  Controller,
  Get,
  HttpException,
  Injectable,
  type INestApplication,
  Module,
  NotFoundException,
  Param,
  ServiceUnavailableException,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Observable, lastValueFrom, of, toArray } from 'rxjs';
import request from 'supertest';
import {
  FakeClock,
  PolicyConfigError,
  PolicyRegistry,
  ResilienceConfigError,
  ResilienceModule,
  type ResilienceModuleOptions,
  Resilient,
} from '../lib/nest/index.js';

// `@Resilient(name, { fallback: 'method' })`: a method of the same class, called on the same instance
// with the same arguments, answers a call the policy stopped without a value of its own.

@Injectable()
class Prices {
  attempts = 0;
  readonly fallbackCalls: unknown[][] = [];

  @Resilient('prices', { fallback: 'cachedPrice' })
  async latest(symbol: string, error: unknown): Promise<number> {
    this.attempts++;
    throw error;
  }

  cachedPrice(symbol: string, error: unknown): number {
    this.fallbackCalls.push([this instanceof Prices, symbol, error]);
    return symbol === 'ACME' ? 41.5 : 0;
  }

  @Resilient('prices', { fallback: 'brokenCache' })
  async failing(error: unknown): Promise<number> {
    this.attempts++;
    throw error;
  }

  brokenCache(): never {
    throw new Error('cache empty');
  }

  @Resilient('prices', { fallback: 'cachedTicks' })
  ticks(symbol: string, error: unknown): Observable<number> {
    return new Observable<number>((subscriber) => {
      this.attempts++;
      subscriber.error(error);
    });
  }

  cachedTicks(symbol: string): Observable<number> {
    return of(1, 2, symbol.length);
  }

  @Resilient('prices', { fallback: 'cachedTick', returns: 'observable' })
  tick(error: unknown): Observable<number> {
    return new Observable<number>((subscriber) => {
      this.attempts++;
      subscriber.error(error);
    });
  }

  async cachedTick(): Promise<number> {
    return 7;
  }
}

const apps: INestApplication[] = [];

afterEach(async () => {
  while (apps.length > 0) await apps.pop()!.close();
});

async function start(
  providers: unknown[],
  options: ResilienceModuleOptions = config(),
): Promise<INestApplication> {
  @Module({ providers: providers as never[] })
  class Providers {}
  const moduleRef = await Test.createTestingModule({
    imports: [ResilienceModule.forRoot(options), Providers],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  apps.push(app);
  await app.init();
  return app;
}

function config(clock = new FakeClock()): ResilienceModuleOptions {
  return {
    clock,
    random: () => 0.5,
    policies: {
      prices: {
        attempts: 3,
        backoff: { type: 'none' },
        breaker: { consecutiveFailures: 6, breakDuration: 60_000 },
        budget: false,
      },
    },
  };
}

describe("@Resilient(name, { fallback: 'method' })", () => {
  it('answers attempts exhausted on Transient failures with the named method, on the same instance with the same arguments', async () => {
    const prices = (await start([Prices])).get(Prices);
    const error = new Error('down');
    await expect(prices.latest('ACME', error)).resolves.toBe(41.5);
    expect(prices.attempts).toBe(3);
    expect(prices.fallbackCalls).toEqual([[true, 'ACME', error]]);
  });

  it('never answers a Permanent verdict: a 404 stays a 404 and the fallback is not called', async () => {
    const prices = (await start([Prices])).get(Prices);
    const notFound = new NotFoundException('no such symbol');
    await expect(prices.latest('NOPE', notFound)).rejects.toBe(notFound);
    expect(prices.attempts).toBe(1);
    expect(prices.fallbackCalls).toEqual([]);
  });

  it("answers a breaker refusal without running the method: the policy's breaker is the name's", async () => {
    const clock = new FakeClock();
    const app = await start([Prices], config(clock));
    const prices = app.get(Prices);
    await prices.latest('ACME', new Error('down'));
    await prices.latest('ACME', new Error('down')); // 6 consecutive failures: the breaker opens
    expect(app.get(PolicyRegistry).breaker('prices')!.state).toBe('open');
    prices.attempts = 0;
    prices.fallbackCalls.length = 0;
    const refused = prices.latest('ACME', new Error('unused'));
    await clock.advance(100); // the guarded pause before a refusal
    await expect(refused).resolves.toBe(41.5);
    expect(prices.attempts).toBe(0);
    expect(prices.fallbackCalls.length).toBe(1);
    expect(prices.fallbackCalls[0]![2]).toEqual(new Error('unused'));
  });

  it("a fallback that throws rejects with its own error, the call's as its cause", async () => {
    const prices = (await start([Prices])).get(Prices);
    const down = new Error('down');
    const rejection = await prices.failing(down).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(rejection?.message).toBe('cache empty');
    expect(rejection?.cause).toBe(down);
    expect(prices.attempts).toBe(3);
  });

  it('Observable mode: the fallback method’s Observable is delivered to the subscriber', async () => {
    const prices = (await start([Prices])).get(Prices);
    await expect(
      lastValueFrom(prices.ticks('ACME', new Error('down')).pipe(toArray())),
    ).resolves.toEqual([1, 2, 4]);
    expect(prices.attempts).toBe(3);
    // A Promise from the fallback is one value, then completion.
    prices.attempts = 0;
    await expect(lastValueFrom(prices.tick(new Error('down')).pipe(toArray()))).resolves.toEqual([
      7,
    ]);
    expect(prices.attempts).toBe(3);
  });
});

describe('the fallback is checked at app.init()', () => {
  it('a name that is no method of the class fails start-up naming the class, the method and the value', async () => {
    @Injectable()
    class Quotes {
      @Resilient('prices', { fallback: 'cachedQuote' })
      async quote(): Promise<number> {
        return 1;
      }
    }
    const failure = await start([Quotes]).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ResilienceConfigError);
    expect((failure as ResilienceConfigError).problems.map((problem) => problem.message)).toEqual([
      '@Resilient(\'prices\') on Quotes.quote: fallback: "cachedQuote" is invalid: must name a method of the same class (the class has no such method)',
    ]);
  });

  it('a name that is not a function, or the decorated method itself, fails start-up', async () => {
    @Injectable()
    class Quotes {
      @Resilient('prices', { fallback: 'limit' })
      async quote(): Promise<number> {
        return 1;
      }

      @Resilient('prices', { fallback: 'again' })
      async again(): Promise<number> {
        return 1;
      }
    }
    (Quotes.prototype as unknown as { limit: number }).limit = 5;
    const failure = await start([Quotes]).catch((error: unknown) => error);
    expect((failure as ResilienceConfigError).problems.map((problem) => problem.message)).toEqual([
      '@Resilient(\'prices\') on Quotes.quote: fallback: "limit" is invalid: must name a method of the same class (it is a number, not a method)',
      '@Resilient(\'prices\') on Quotes.again: fallback: "again" is invalid: must name another method of the class, not the decorated one',
    ]);
  });

  it('a fallback that is not a non-empty string is refused where it is written', () => {
    const refusal = (fallback: unknown) => {
      try {
        Resilient('prices', { fallback: fallback as string });
      } catch (error) {
        return [
          error instanceof PolicyConfigError,
          (error as PolicyConfigError).field,
          (error as Error).message,
        ];
      }
      return undefined;
    };
    const rule =
      "must be the name of a method of the same class, a non-empty string (in @Resilient('prices', { fallback }))";
    expect(refusal(42)).toEqual([true, 'fallback', `fallback: 42 is invalid: ${rule}`]);
    expect(refusal('')).toEqual([true, 'fallback', `fallback: "" is invalid: ${rule}`]);
    expect(refusal(() => 1)).toEqual([true, 'fallback', expect.stringContaining(rule)]);
  });

  it('an accessor is refused unread: a getter is never run to find the fallback', async () => {
    let reads = 0;
    @Injectable()
    class Quotes {
      @Resilient('prices', { fallback: 'cachedQuote' })
      async quote(): Promise<number> {
        return 1;
      }

      get cachedQuote(): () => number {
        reads++;
        return () => 2;
      }
    }
    const failure = await start([Quotes]).catch((error: unknown) => error);
    expect((failure as ResilienceConfigError).problems.map((problem) => problem.message)).toEqual([
      '@Resilient(\'prices\') on Quotes.quote: fallback: "cachedQuote" is invalid: must name a method of the same class (it is an accessor (get/set), not a method)',
    ]);
    expect(reads).toBe(0);
  });

  it('refusals by the limiter are answered too', async () => {
    @Injectable()
    class Slow {
      release: (() => void) | undefined;
      started = 0;

      @Resilient('slow', { fallback: 'cached' })
      async load(id: string): Promise<string> {
        this.started++;
        await new Promise<void>((resolve) => (this.release = resolve));
        return `fresh ${id}`;
      }

      cached(id: string): string {
        return `cached ${id}`;
      }
    }
    const clock = new FakeClock();
    const app = await start([Slow], {
      clock,
      policies: { slow: { attempts: 1, limit: { concurrency: 1 } } },
    });
    const slow = app.get(Slow);
    const first = slow.load('a');
    await Promise.resolve();
    const second = slow.load('b');
    await clock.advance(100); // the guarded pause before a refusal
    await expect(second).resolves.toBe('cached b');
    slow.release!();
    await expect(first).resolves.toBe('fresh a');
    expect(slow.started).toBe(1);
  });
});

describe('the exception filter answers nothing special for a call the fallback served', () => {
  @Controller('quotes')
  class QuotesController {
    started = 0;
    cache: 'hit' | 'empty' | 'gone' = 'hit';

    @Get(':symbol')
    @Resilient('quotes', { fallback: 'cached' })
    async latest(@Param('symbol') symbol: string): Promise<{ symbol: string; price: number }> {
      this.started++;
      throw new ServiceUnavailableException(`no price for ${symbol}`);
    }

    cached(symbol: string): { symbol: string; price: number; cached: true } {
      if (this.cache === 'empty') throw new Error('no cached quote');
      if (this.cache === 'gone') throw new HttpException('delisted', 410);
      return { symbol, price: 41.5, cached: true };
    }
  }

  async function quotes(clock: FakeClock) {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          clock,
          exceptionFilter: true,
          logging: 'off',
          telemetry: false,
          policies: {
            quotes: {
              attempts: 2,
              backoff: { type: 'none' },
              budget: false,
              breaker: { consecutiveFailures: 2, breakDuration: 60_000, jitter: 'none' },
            },
          },
        }),
      ],
      controllers: [QuotesController],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    apps.push(app);
    await app.init();
    return { app, controller: app.get(QuotesController) };
  }

  /** GET `path`, advancing the fake clock past the guarded pause (100 ms) of a refusal. */
  async function get(app: INestApplication, clock: FakeClock, path: string) {
    let settled = false;
    const pending = request(app.getHttpServer())
      .get(path)
      .then((response) => {
        settled = true;
        return response;
      });
    for (let i = 0; i < 200 && !settled; i++) await clock.advance(10);
    return pending;
  }

  it("answers 200 with the fallback's value, attempts exhausted or refused by the breaker, with no Retry-After", async () => {
    const clock = new FakeClock();
    const { app, controller } = await quotes(clock);
    const exhausted = await get(app, clock, '/quotes/ACME');
    expect([exhausted.status, exhausted.headers['retry-after'], exhausted.body]).toEqual([
      200,
      undefined,
      { symbol: 'ACME', price: 41.5, cached: true },
    ]);
    expect(controller.started).toBe(2);
    expect(app.get(PolicyRegistry).breaker('quotes')!.state).toBe('open');
    const refused = await get(app, clock, '/quotes/INIT');
    expect([refused.status, refused.headers['retry-after'], refused.body]).toEqual([
      200,
      undefined,
      { symbol: 'INIT', price: 41.5, cached: true },
    ]);
    expect(controller.started).toBe(2);
  });

  it("a fallback that throws: its HttpException is the answer; another error is answered by the call's own, its cause (a refusal: 503 with Retry-After)", async () => {
    const clock = new FakeClock();
    const { app, controller } = await quotes(clock);
    controller.cache = 'gone';
    const gone = await get(app, clock, '/quotes/ACME');
    expect([gone.status, gone.body]).toEqual([410, { statusCode: 410, message: 'delisted' }]);
    controller.cache = 'empty';
    const refused = await get(app, clock, '/quotes/ACME');
    expect([
      refused.status,
      refused.headers['retry-after'],
      refused.headers['content-type'],
      refused.body.reason,
    ]).toEqual([503, '60', 'application/problem+json; charset=utf-8', 'DependencyUnavailable']);
    expect(controller.started).toBe(2);
  });
});
