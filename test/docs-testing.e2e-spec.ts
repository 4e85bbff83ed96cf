// docs/testing.md, "Testing a Nest service": its regions are the guide's blocks, run as they are.
// #region nest-testing
import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ResilienceModule } from '../lib/nest/index.js';
import {
  InjectResilientFetch,
  type ResilientFetch,
  ResilientHttpModule,
  getResilientFetchToken,
} from '../lib/http/index.js';
import { FakeClock, ScriptedFetch } from '../lib/testing/index.js';

/** The service under test: it calls the prices API through the resilient fetch of the `prices` policy. */
@Injectable()
export class PricesClient {
  constructor(@InjectResilientFetch('prices') private readonly http: ResilientFetch) {}

  async quote(sku: string): Promise<number> {
    const response = await this.http(`https://prices.example/quote/${sku}`);
    if (!response.ok) throw new Error(`prices answered ${response.status}`);
    return ((await response.json()) as { price: number }).price;
  }
}

/** The application's module, as it runs in production. */
@Module({
  imports: [
    ResilienceModule.forRoot({
      policies: { prices: { preset: 'http', attempts: 3, backoff: { transientBase: '100ms' } } },
    }),
    ResilientHttpModule.register({ policy: 'prices' }),
  ],
  providers: [PricesClient],
})
export class PricesModule {}

describe('PricesClient', () => {
  it('retries a 503 after the backoff: the module runs on a FakeClock, the fetch on a script', async () => {
    const clock = new FakeClock();
    const prices = new ScriptedFetch({ clock })
      .responds(503)
      .responds(200, { json: { price: 12.5 } });
    const moduleRef = await Test.createTestingModule({
      imports: [
        // The same policy config, with the test's clock (every policy and budget of the module uses it)…
        ResilienceModule.forRoot({
          policies: {
            prices: { preset: 'http', attempts: 3, backoff: { transientBase: '100ms' } },
          },
          clock,
        }),
        // …and the scripted transport under the resilient fetch instead of the network.
        ResilientHttpModule.register({ policy: 'prices', fetch: prices.fetch }),
      ],
      providers: [PricesClient],
    }).compile();
    await moduleRef.init(); // ResilienceModule loads its policies here
    const client = moduleRef.get(PricesClient);

    const quote = client.quote('sku-1');
    await clock.advance(100); // the retry's backoff (full jitter: at most 100 ms), on the test's clock
    expect(await quote).toBe(12.5);
    expect(prices.callCount).toBe(2);
    expect(prices.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET https://prices.example/quote/sku-1',
      'GET https://prices.example/quote/sku-1',
    ]);
    await moduleRef.close();
  });

  it('the application module as it is, with the resilient fetch replaced through its token', async () => {
    // No policy in the way: the service's own logic against a scripted transport, one request per call.
    const prices = new ScriptedFetch().responds(200, { json: { price: 9 } }).responds(503);
    const moduleRef = await Test.createTestingModule({ imports: [PricesModule] })
      .overrideProvider(getResilientFetchToken('prices'))
      .useValue(prices.fetch)
      .compile();
    await moduleRef.init();
    const client = moduleRef.get(PricesClient);

    expect(await client.quote('sku-2')).toBe(9);
    await expect(client.quote('sku-2')).rejects.toThrow('prices answered 503');
    expect(prices.callCount).toBe(2);
    await moduleRef.close();
  });
});
// #endregion nest-testing
