import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  type BeforeApplicationShutdown,
  Controller,
  Get,
  Injectable,
  type INestApplication,
  Module,
  Scope,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  FakeClock,
  ResilienceModule,
  type ResilienceModuleOptions,
  Resilient,
} from '../lib/nest/index.js';

// One feature module, two applications built from it with different configs (issue 9, DESIGN §4).

/** Counts its attempts per instance; every attempt fails, so a call makes the policy's whole count. */
@Injectable()
class Payments {
  attempts = 0;

  @Resilient('payments')
  async charge(): Promise<string> {
    this.attempts++;
    throw new Error('declined');
  }

  @Resilient('payments')
  async ping(): Promise<string> {
    this.attempts++;
    return 'pong';
  }
}

/** A request-scoped provider: Nest creates one per request, after start-up. */
@Injectable({ scope: Scope.REQUEST })
class PerRequest {
  attempts = 0;

  @Resilient('payments')
  async charge(): Promise<number> {
    this.attempts++;
    if (this.attempts < 10) throw new Error('declined');
    return this.attempts;
  }
}

/** A transient provider: one instance per consumer, made at start-up. */
@Injectable({ scope: Scope.TRANSIENT })
class PerConsumer {
  attempts = 0;

  @Resilient('payments')
  async charge(): Promise<string> {
    this.attempts++;
    throw new Error('declined');
  }
}

@Injectable()
class Consumer {
  constructor(readonly perConsumer: PerConsumer) {}
}

/** Holds requests until the application is closing: its `beforeApplicationShutdown` opens it. */
@Injectable()
class ClosingGate implements BeforeApplicationShutdown {
  waiting = 0;
  private open!: () => void;
  readonly opened = new Promise<void>((resolve) => (this.open = resolve));

  beforeApplicationShutdown(): void {
    this.open();
  }
}

@Controller('pay')
class PayController {
  constructor(
    private readonly payments: Payments,
    private readonly perRequest: PerRequest,
    private readonly gate: ClosingGate,
  ) {}

  @Get('ping')
  ping(): Promise<string> {
    return this.payments.ping();
  }

  @Get('after-close-began')
  async afterCloseBegan(): Promise<string> {
    this.gate.waiting++;
    await this.gate.opened;
    return this.payments.ping();
  }

  @Get('request-scoped')
  async requestScoped(): Promise<{ attempts: number }> {
    await this.perRequest.charge().catch(() => undefined);
    return { attempts: this.perRequest.attempts };
  }
}

/** Calls a `@Resilient` method while the application closes (after every module was told it is being destroyed). */
@Injectable()
class CallsOnClose implements BeforeApplicationShutdown {
  outcome: unknown;
  constructor(private readonly payments: Payments) {}

  async beforeApplicationShutdown(): Promise<void> {
    this.outcome = await this.payments.ping().catch((error: unknown) => error);
  }
}

@Module({
  providers: [Payments, PerRequest, PerConsumer, Consumer, CallsOnClose, ClosingGate],
  controllers: [PayController],
})
class PaymentsModule {}

const apps: INestApplication[] = [];

async function boot(
  attempts: number,
  options: Partial<ResilienceModuleOptions> = {},
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({
        policies: { payments: { attempts, backoff: { type: 'none' }, budget: false } },
        clock: new FakeClock(),
        ...options,
      }),
      PaymentsModule,
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  apps.push(app);
  return app;
}

afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

describe('two applications in one process, built from the same module', () => {
  it('each runs its own policy for the same class: 4 attempts in A, 1 in B, in either order', async () => {
    const a = await boot(4);
    const b = await boot(1);
    const inA = a.get(Payments);
    const inB = b.get(Payments);
    await expect(inB.charge()).rejects.toThrow('declined');
    await expect(inA.charge()).rejects.toThrow('declined');
    await expect(inB.charge()).rejects.toThrow('declined');
    expect([inA.attempts, inB.attempts]).toEqual([4, 2]);
  });

  it('transient instances run their own application policy', async () => {
    const a = await boot(3);
    const b = await boot(2);
    const inA = a.get(Consumer).perConsumer;
    const inB = b.get(Consumer).perConsumer;
    await expect(inA.charge()).rejects.toThrow('declined');
    await expect(inB.charge()).rejects.toThrow('declined');
    expect([inA.attempts, inB.attempts]).toEqual([3, 2]);
  });

  it('request-scoped instances, created per request after start-up, run their own application policy', async () => {
    const a = await boot(5);
    const b = await boot(2);
    const [fromA, fromB] = await Promise.all([
      request(a.getHttpServer()).get('/pay/request-scoped').expect(200),
      request(b.getHttpServer()).get('/pay/request-scoped').expect(200),
    ]);
    expect([fromA.body, fromB.body]).toEqual([{ attempts: 5 }, { attempts: 2 }]);
  });
});

describe('an instance Nest did not create', () => {
  it('uses the one application running', async () => {
    await boot(3);
    const unmanaged = new Payments();
    await expect(unmanaged.charge()).rejects.toThrow('declined');
    expect(unmanaged.attempts).toBe(3);
  });

  it('fails with what to do while two applications run, and while none does', async () => {
    await boot(3);
    await boot(1);
    await expect(new Payments().charge()).rejects.toThrow(
      "@Resilient('payments') on Payments.charge was called on an instance no Nest application created, while 2 applications with ResilienceModule are running, " +
        'so whose policies to use is unknown: get the instance from the application it belongs to (a provider or controller, app.get(Class)) instead of creating it with new',
    );
    for (const app of apps.splice(0)) await app.close();
    await expect(new Payments().charge()).rejects.toThrow(
      "@Resilient('payments') on Payments.charge was called, but no ResilienceModule is initialized",
    );
  });
});

describe('while the application closes', () => {
  it('a call entering a @Resilient method after app.close() began is served', async () => {
    const app = await boot(3);
    const closing = app.get(CallsOnClose);
    apps.splice(0);
    await app.close();
    expect(closing.outcome).toBe('pong');
  });

  it('requests reaching a @Resilient method after app.close() began get 200, never a 500 from the library (20 of 20)', async () => {
    const app = await boot(3);
    await app.listen(0, '127.0.0.1');
    const url = await app.getUrl();
    const gate = app.get(ClosingGate);
    const statuses = Array.from({ length: 20 }, () =>
      request(url)
        .get('/pay/after-close-began')
        .then((response) => [response.status, response.text]),
    );
    while (gate.waiting < 20) await new Promise((resolve) => setImmediate(resolve));
    apps.splice(0);
    const closed = app.close();
    expect(await Promise.all(statuses)).toEqual(Array.from({ length: 20 }, () => [200, 'pong']));
    await closed;
  });
});
