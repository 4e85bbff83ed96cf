import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Injectable, type INestApplication, Param } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { InjectPolicy, PolicyHandle, PolicyRegistry, ResilienceModule } from '../lib/nest/index.js';

/** The shared downstream dependency: it fails every call made for the tenants in `failing`. */
@Injectable()
class Ledger {
  readonly failing = new Set<string>();
  readonly calls = new Map<string, number>();

  async charge(tenant: string, signal: AbortSignal): Promise<{ tenant: string; charged: true }> {
    signal.throwIfAborted();
    this.calls.set(tenant, (this.calls.get(tenant) ?? 0) + 1);
    if (this.failing.has(tenant))
      throw new Error(`ledger rejected a malformed request from ${tenant}`);
    return { tenant, charged: true };
  }
}

@Controller('tenants')
class ChargeController {
  constructor(
    @InjectPolicy('billing') private readonly billing: PolicyHandle,
    private readonly ledger: Ledger,
  ) {}

  @Get(':tenant/charge')
  charge(@Param('tenant') tenant: string): Promise<{ tenant: string; charged: true }> {
    return this.billing.for(tenant).run(({ signal }) => this.ledger.charge(tenant, signal));
  }
}

describe('keyed policies in a Nest app (scope + handle.for)', () => {
  let app: INestApplication;
  let ledger: Ledger;
  let registry: PolicyRegistry;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          // A 15 s break: this test reads the real clock, so the break must outlast its requests.
          policies: {
            billing: {
              attempts: 1,
              breaker: { jitter: 'none', breakDuration: '15s' },
              scope: { maximumKeys: 100 },
            },
          },
          exceptionFilter: true,
        }),
      ],
      controllers: [ChargeController],
      providers: [Ledger],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    ledger = app.get(Ledger);
    registry = app.get(PolicyRegistry);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('one tenant opens only its own breaker: the other keeps being served', async () => {
    const server = app.getHttpServer();
    ledger.failing.add('noisy');
    for (let i = 0; i < 5; i++) {
      expect((await request(server).get('/tenants/noisy/charge')).status).toBe(500);
    }
    // Five consecutive Transient failures opened noisy's breaker; quiet's breaker never saw them.
    const quiet = await request(server).get('/tenants/quiet/charge');
    expect([quiet.status, quiet.body]).toEqual([200, { tenant: 'quiet', charged: true }]);

    const refused = await request(server).get('/tenants/noisy/charge');
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('15'); // the 15 s break less the 100 ms guarded pause, rounded up
    expect(refused.body).toMatchObject({ status: 503, reason: 'DependencyUnavailable' });
    expect(ledger.calls.get('noisy')).toBe(5); // the refused call never reached the ledger

    for (let i = 0; i < 3; i++)
      expect((await request(server).get('/tenants/quiet/charge')).status).toBe(200);
    expect(ledger.calls.get('quiet')).toBe(4);

    const scope = registry.scope('billing')!;
    expect(scope.entries().map((e) => [e.key, e.breaker!.state])).toEqual([
      ['noisy', 'open'],
      ['quiet', 'closed'],
    ]);
    // The breaker pinned to the name (unkeyed use) is untouched too.
    expect(registry.breaker('billing')!.state).toBe('closed');
  });
});
