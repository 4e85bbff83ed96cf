import 'reflect-metadata';
import { createHook } from 'node:async_hooks';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  type ArgumentMetadata,
  type CallHandler,
  Controller,
  type ExecutionContext,
  Get,
  Injectable,
  type INestApplication,
  Module,
  type NestInterceptor,
  Param,
  type PipeTransform,
  Scope,
  type Type,
  UseInterceptors,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Observable, map, of, throwError } from 'rxjs'; // Observable as a value: @Resilient reads design:returntype
import request from 'supertest';
import {
  AttemptSignal,
  FakeClock,
  InjectPolicy,
  PolicyHandle,
  PolicyRegistry,
  RESILIENT_POLICY_METADATA,
  ResilienceModule,
  type ResilienceModuleOptions,
  Resilient,
  SystemClock,
} from '../lib/nest/index.js';

const counts = { above: 0, below: 0, stream: 0, signal: 0 };
const seenThis: unknown[] = [];
const pipeSaw: unknown[] = [];
let clock: FakeClock;

const policies = {
  payments: { attempts: 3, backoff: { type: 'none' as const } },
  ledger: {
    attempts: 2,
    backoff: { type: 'none' as const },
    budget: { fraction: 0.1, minimumPerSecond: 1 },
  },
};

@Injectable()
class RecordingPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    pipeSaw.push(metadata.metatype);
    return metadata.metatype === Number ? Number(value) : value;
  }
}

@Injectable()
class TagInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const policy: unknown = Reflect.getMetadata(RESILIENT_POLICY_METADATA, context.getHandler());
    return next.handle().pipe(map((body) => ({ ...(body as object), intercepted: true, policy })));
  }
}

@Injectable()
class StreamService {
  calls = 0;
  @Resilient('payments')
  quotes(): Observable<{ quote: number }> {
    this.calls++;
    return this.calls <= 2 ? throwError(() => new Error('quote feed down')) : of({ quote: 42 });
  }
}

@Controller('orders')
class OrdersController {
  constructor(readonly streams: StreamService) {}

  // @Resilient above @Get(): it runs after @Get, whose metadata sits on the original function.
  @Resilient('payments')
  @Get('above/:id')
  @UseInterceptors(TagInterceptor)
  async above(@Param('id', RecordingPipe) id: string): Promise<object> {
    counts.above++;
    seenThis.push(this);
    if (counts.above <= 2) throw new Error('flaky');
    return { id, calls: counts.above, self: this instanceof OrdersController };
  }

  // @Resilient below @Get(): @Get and @UseInterceptors decorate the wrapper.
  @Get('below/:id')
  @UseInterceptors(TagInterceptor)
  @Resilient('payments')
  async below(@Param('id', RecordingPipe) id: number): Promise<object> {
    counts.below++;
    seenThis.push(this);
    if (counts.below <= 2) throw new Error('flaky');
    return { id, calls: counts.below, self: this instanceof OrdersController };
  }

  @Get('stream')
  @Resilient('payments')
  stream(): Observable<{ n: number }> {
    counts.stream++;
    return counts.stream <= 2 ? throwError(() => new Error('flaky')) : of({ n: counts.stream });
  }

  @Get('signal')
  @Resilient('payments')
  async signal(@AttemptSignal() signal?: AbortSignal): Promise<object> {
    counts.signal++;
    if (counts.signal === 1) throw new Error('flaky');
    return { isSignal: signal instanceof AbortSignal, aborted: signal?.aborted };
  }

  @Get('quotes')
  quotes(): Observable<{ quote: number }> {
    return this.streams.quotes();
  }
}

let scopedCreated = 0;

@Injectable({ scope: Scope.REQUEST })
class ScopedService {
  readonly instance = ++scopedCreated;
  calls = 0;
  @Resilient('payments')
  async work(): Promise<object> {
    this.calls++;
    if (this.calls <= 2) throw new Error('flaky');
    return { instance: this.instance, calls: this.calls };
  }
}

@Controller('scoped')
class ScopedController {
  constructor(private readonly scoped: ScopedService) {}
  @Get()
  run(): Promise<object> {
    return this.scoped.work();
  }
}

@Injectable()
class Gateway {
  constructor(@InjectPolicy('ledger') readonly ledger: PolicyHandle) {}
}

async function boot(
  options: Partial<ResilienceModuleOptions> = {},
  extra: { providers?: Type[]; controllers?: Type[] } = {},
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [ResilienceModule.forRoot({ policies, clock, ...options })],
    controllers: extra.controllers ?? [OrdersController, ScopedController],
    providers: extra.providers ?? [
      StreamService,
      ScopedService,
      RecordingPipe,
      TagInterceptor,
      Gateway,
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

let app: INestApplication | undefined;

beforeEach(() => {
  clock = new FakeClock();
  Object.assign(counts, { above: 0, below: 0, stream: 0, signal: 0 });
  seenThis.length = 0;
  pipeSaw.length = 0;
});

afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('@Resilient on a real controller', () => {
  it.each([
    ['above', 'above/a1', 'a1', String],
    ['below', 'below/7', 7, Number],
  ] as const)(
    '@Resilient %s @Get(): 3 calls for a method failing twice, this preserved, interceptor and pipe metadata intact',
    async (_order, path, id, metatype) => {
      app = await boot();
      const response = await request(app.getHttpServer()).get(`/orders/${path}`).expect(200);
      expect(response.body).toEqual({
        id,
        calls: 3,
        self: true,
        intercepted: true,
        policy: 'payments',
      });
      const controller = app.get(OrdersController);
      expect(seenThis).toEqual([controller, controller, controller]);
      expect(pipeSaw).toEqual([metatype]); // design:paramtypes reached the pipe; the pipe ran once per request
    },
  );

  it('retries an Observable handler with a fresh invocation per attempt', async () => {
    app = await boot();
    await request(app.getHttpServer()).get('/orders/stream').expect(200, { n: 3 });
    expect(counts.stream).toBe(3);
  });

  it('an Observable-returning provider method runs nothing before subscribe', async () => {
    app = await boot();
    const service = app.get(StreamService);
    const quotes = service.quotes();
    expect(service.calls).toBe(0);
    await request(app.getHttpServer()).get('/orders/quotes').expect(200, { quote: 42 });
    expect(service.calls).toBe(3);
    quotes.subscribe(); // the first Observable is still cold and now runs on its own
    await new Promise((resolve) => setImmediate(resolve));
    expect(service.calls).toBe(4);
  });

  it('gives a controller method the attempt signal at its @AttemptSignal() position', async () => {
    app = await boot();
    await request(app.getHttpServer())
      .get('/orders/signal')
      .expect(200, { isSignal: true, aborted: false });
    expect(counts.signal).toBe(2);
  });

  it('works on request-scoped providers: each request gets its own instance as `this` on every attempt', async () => {
    app = await boot();
    const server = app.getHttpServer();
    const first = await request(server).get('/scoped').expect(200);
    const second = await request(server).get('/scoped').expect(200);
    expect(first.body.calls).toBe(3);
    expect(second.body.calls).toBe(3);
    expect(second.body.instance).not.toBe(first.body.instance);
  });

  it('fails a call with the final error after the attempts (500 without the filter)', async () => {
    app = await boot({
      policies: { ...policies, payments: { attempts: 2, backoff: { type: 'none' } } },
    });
    await request(app.getHttpServer()).get('/orders/above/x').expect(500);
    expect(counts.above).toBe(2);
  });
});

describe('@InjectPolicy and reload', () => {
  it('injects a stable handle that runs the current policy and keeps the budget level across a reload', async () => {
    app = await boot();
    const gateway = app.get(Gateway);
    const registry = app.get(PolicyRegistry);
    expect(gateway.ledger).toBeInstanceOf(PolicyHandle);
    expect(gateway.ledger.current).toBe(registry.get('ledger'));
    const bucket = registry.bucket('ledger')!;
    expect(bucket.capacity).toBe(10);
    let calls = 0;
    // 4 calls failing once then succeeding: 4 retries spend 4 tokens, 4 successes deposit 0.4.
    for (let i = 0; i < 4; i++) {
      await gateway.ledger.run(async () => {
        if (++calls % 2 === 1) throw new Error('flaky');
        return calls;
      });
    }
    expect(bucket.level).toBeCloseTo(6.4, 10);

    registry.reload({
      policies: {
        ...policies,
        ledger: {
          attempts: 5,
          backoff: { type: 'none' },
          budget: { fraction: 0.1, minimumPerSecond: 2 },
        },
      },
    });
    expect(gateway.ledger.current.options.attempts).toBe(5);
    expect(registry.bucket('ledger')).toBe(bucket);
    expect(bucket.level).toBeCloseTo(6.4, 10);
    expect(bucket.capacity).toBe(20);

    expect(() =>
      registry.reload({ policies: { ...policies, ledger: { budget: { fraction: 7 } } } }),
    ).toThrow('policies.ledger.budget.fraction: 7 is invalid: must be a number in [0, 1]');
    expect(gateway.ledger.current.options.attempts).toBe(5);
    expect(() => registry.reload({ policies: { payments: {} } })).toThrow(
      /policies\.ledger: undefined is invalid: is required: it is used by @InjectPolicy in Gateway/,
    );
  });

  it('@Resilient methods run the reloaded policy', async () => {
    app = await boot();
    app
      .get(PolicyRegistry)
      .reload({ policies: { ...policies, payments: { attempts: 2, backoff: { type: 'none' } } } });
    await request(app.getHttpServer()).get('/orders/below/1').expect(500);
    expect(counts.below).toBe(2);
  });

  it('forRootAsync builds the options from injected providers', async () => {
    const CONFIG = Symbol('CONFIG');
    @Module({
      providers: [
        {
          provide: CONFIG,
          useValue: { payments: { attempts: 3, backoff: { type: 'none' } }, ledger: {} },
        },
      ],
      exports: [CONFIG],
    })
    class ConfigModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRootAsync({
          imports: [ConfigModule],
          inject: [CONFIG],
          useFactory: (config: ResilienceModuleOptions['policies']) => ({
            policies: config,
            clock,
          }),
        }),
      ],
      controllers: [OrdersController],
      providers: [StreamService, RecordingPipe, TagInterceptor, Gateway],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    expect(app.get(PolicyRegistry).names()).toEqual(['payments', 'ledger']);
    expect(app.get(PolicyRegistry).get('payments').options.clock).toBe(clock);
    await request(app.getHttpServer()).get('/orders/above/z').expect(200);
    expect(counts.above).toBe(3);
  });
});

describe('module definition', () => {
  it('is global by default; isGlobal: false and exceptionFilter stay out of the options provider', async () => {
    expect(ResilienceModule.forRoot({ policies: {} }).global).toBe(true);
    const local = ResilienceModule.forRoot({
      policies,
      clock,
      isGlobal: false,
      exceptionFilter: false,
    });
    expect(local.global).toBe(false);
    const moduleRef = await Test.createTestingModule({
      imports: [local],
      providers: [Gateway],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    expect(app.get(Gateway).ledger.current.name).toBe('ledger');
  });
});

describe('start-up checks', () => {
  async function initError(
    options: Partial<ResilienceModuleOptions>,
    providers: Type[],
    controllers: Type[] = [],
  ): Promise<Error> {
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ policies, clock, ...options })],
      providers,
      controllers,
    }).compile();
    const failing = moduleRef.createNestApplication({ logger: false });
    try {
      await failing.init();
    } catch (error) {
      return error as Error;
    } finally {
      await failing.close();
    }
    throw new Error('expected app.init() to reject');
  }

  it('an unknown @Resilient name fails app.init(), naming it and where it is used', async () => {
    @Injectable()
    class Billing {
      @Resilient('billing')
      async charge(): Promise<void> {}
    }
    const error = await initError({}, [Billing]);
    expect(error.name).toBe('UnknownPolicyError');
    expect(error.message).toContain('"billing" (@Resilient on Billing.charge)');
    expect(error.message).toContain('registered policies: "payments", "ledger"');
  });

  it('an unknown @InjectPolicy name fails app.init()', async () => {
    @Injectable()
    class Audit {
      constructor(@InjectPolicy('audit') readonly audit: PolicyHandle) {}
    }
    const error = await initError({}, [Audit]);
    expect(error.message).toContain('"audit" (@InjectPolicy in Audit)');
  });

  it('invalid config fails app.init() with the full path, the value and the allowed range', async () => {
    const error = await initError({ policies: { payments: { budget: { fraction: 1.5 } } } }, []);
    expect(error.name).toBe('ResilienceConfigError');
    expect(error.message).toContain(
      'policies.payments.budget.fraction: 1.5 is invalid: must be a number in [0, 1]',
    );
  });

  it('@AttemptSignal() without @Resilient fails app.init()', async () => {
    @Injectable()
    class Loose {
      async fetch(@AttemptSignal() _signal?: AbortSignal): Promise<void> {}
    }
    const error = await initError({}, [Loose]);
    expect(error.message).toBe(
      '@AttemptSignal() needs @Resilient(name) on the same method: Loose.fetch',
    );
  });
});

describe('shutdown', () => {
  it('leaves no timer behind after app.close(), with the system clock, deadlines and attempt timeouts', async () => {
    // Every timer this test's code sets, by stack: a process-wide count would also see the timers of
    // Jest's own reporter, which come and go on their own schedule.
    const created = new Map<
      number,
      { stack: string; timer: { hasRef(): boolean; _destroyed?: boolean } }
    >();
    const hook = createHook({
      init(id, type, _trigger, resource) {
        if (type === 'Timeout')
          created.set(id, { stack: new Error().stack ?? '', timer: resource as never });
      },
      destroy(id) {
        created.delete(id);
      },
    }).enable();
    const leftover = () =>
      [...created.values()].filter(
        ({ stack, timer }) =>
          timer._destroyed !== true && timer.hasRef() && !stack.includes('@jest/reporters'),
      );
    try {
      app = await boot({
        clock: undefined,
        policies: {
          ...policies,
          payments: {
            attempts: 3,
            backoff: { type: 'none' },
            deadline: '5s',
            attemptTimeout: '1s',
          },
        },
      });
      await request(app.getHttpServer()).get('/orders/above/t').expect(200);
      expect(counts.above).toBe(3);
      await app.close();
      app = undefined;
      // Our timers all live on the clock: none may be pending (they are unref'd besides).
      expect(SystemClock.instance.pending).toBe(0);
      // Nothing ref'd is left either; loopback sockets may need a few turns to finish closing.
      // On a loaded machine that takes more than a few immediate turns: wait up to 2 s of short timers.
      for (let turn = 0; turn < 400 && leftover().length > 0; turn++)
        await new Promise((resolve) =>
          turn < 50 ? setImmediate(resolve) : setTimeout(resolve, 5),
        );
      expect(leftover().map(({ stack }) => stack)).toEqual([]);
    } finally {
      hook.disable();
    }
  });
});
