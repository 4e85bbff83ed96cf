import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplication, Module, NotFoundException } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Observable } from 'rxjs';
import {
  Classifier,
  FakeClock,
  PolicyRegistry,
  ResilienceModule,
  type ResilienceModuleOptions,
  Resilient,
  Verdict,
} from '../lib/nest/index.js';

// `@Resilient(name, { classifier })` (DESIGN §4): a classifier per decorated method, on the named
// policy of the method's own application; the policy's breaker and budget stay the name's.

class StaleIndexError extends Error {
  override readonly name = 'StaleIndexError';
}

const staleIsAnAnswer = Classifier.forErrors(Classifier.when(StaleIndexError, Verdict.permanent));

/** Every method counts its attempts and throws what it is given. */
@Injectable()
class Catalog {
  attempts = 0;

  @Resilient('catalog')
  async browse(error: unknown): Promise<never> {
    this.attempts++;
    throw error;
  }

  @Resilient('catalog', { classifier: staleIsAnAnswer })
  async search(error: unknown): Promise<never> {
    this.attempts++;
    throw error;
  }

  @Resilient('catalog', { classifier: { base: 'grpc', permanent: ['ConflictError'] } })
  async lookup(error: unknown): Promise<never> {
    this.attempts++;
    throw error;
  }

  @Resilient('catalog', { classifier: staleIsAnAnswer })
  stream(error: unknown): Observable<never> {
    return new Observable<never>((subscriber) => {
      this.attempts++;
      subscriber.error(error);
    });
  }
}

@Module({ providers: [Catalog] })
class CatalogModule {}

const apps: INestApplication[] = [];

afterEach(async () => {
  while (apps.length > 0) await apps.pop()!.close();
});

async function start(
  options: ResilienceModuleOptions,
  imports: unknown[] = [CatalogModule],
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [ResilienceModule.forRoot(options), ...(imports as never[])],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  apps.push(app);
  await app.init();
  return app;
}

const config = (attempts: number): ResilienceModuleOptions => ({
  clock: new FakeClock(),
  random: () => 0.5,
  policies: {
    catalog: {
      attempts,
      backoff: { type: 'none' },
      breaker: { consecutiveFailures: 20 },
      budget: { fraction: 0.1, minimumPerSecond: 1 },
    },
  },
});

/** The attempts one call of `method` made with `error`, and what it rejected with. */
async function attemptsOf(
  catalog: Catalog,
  method: 'browse' | 'search' | 'lookup',
  error: unknown,
): Promise<number> {
  catalog.attempts = 0;
  await expect(catalog[method](error)).rejects.toBe(error);
  return catalog.attempts;
}

describe('@Resilient(name, { classifier })', () => {
  it("overrides the policy's classifier for that method's calls only", async () => {
    const catalog = (await start(config(3))).get(Catalog);
    expect(await attemptsOf(catalog, 'search', new StaleIndexError('stale'))).toBe(1);
    expect(await attemptsOf(catalog, 'browse', new StaleIndexError('stale'))).toBe(3); // the policy's default: Transient
    expect(await attemptsOf(catalog, 'search', new Error('down'))).toBe(3); // what the rule leaves to the default rules
    // The config form, over base 'grpc': a listed name first, then gRPC statuses.
    expect(
      await attemptsOf(catalog, 'lookup', Object.assign(new Error('c'), { name: 'ConflictError' })),
    ).toBe(1);
    expect(
      await attemptsOf(catalog, 'lookup', Object.assign(new Error('u'), { code: 14, details: '' })),
    ).toBe(3);
    expect(
      await attemptsOf(catalog, 'lookup', Object.assign(new Error('n'), { code: 5, details: '' })),
    ).toBe(1);
    expect(
      await attemptsOf(catalog, 'browse', Object.assign(new Error('n'), { code: 5, details: '' })),
    ).toBe(3);
    // In Nest the config form keeps judging an HttpException by its status: a 404 is an answer.
    expect(await attemptsOf(catalog, 'lookup', new NotFoundException())).toBe(1);
  });

  it("keeps the named policy's breaker and budget: the method's failures and retries land in the name's state", async () => {
    const app = await start(config(3));
    const catalog = app.get(Catalog);
    const registry = app.get(PolicyRegistry);
    const bucket = registry.bucket('catalog')!;
    const before = bucket.level;
    await attemptsOf(catalog, 'search', new Error('down'));
    expect(registry.breaker('catalog')!.snapshot().consecutiveFailures).toBe(3);
    expect(before - bucket.level).toBeCloseTo(2, 9); // two retries, one token each
    await attemptsOf(catalog, 'browse', new Error('down'));
    expect(registry.breaker('catalog')!.snapshot().consecutiveFailures).toBe(6);
    // A permanent verdict from the method's own rule is no evidence: the run of failures stays.
    await attemptsOf(catalog, 'search', new StaleIndexError('stale'));
    expect(registry.breaker('catalog')!.snapshot().consecutiveFailures).toBe(6);
  });

  it('follows a reload of the policy, keeping its own classifier', async () => {
    const app = await start(config(3));
    const catalog = app.get(Catalog);
    app
      .get(PolicyRegistry)
      .reload({ policies: { catalog: { attempts: 2, backoff: { type: 'none' } } } });
    expect(await attemptsOf(catalog, 'search', new Error('down'))).toBe(2);
    expect(await attemptsOf(catalog, 'search', new StaleIndexError('stale'))).toBe(1);
  });

  it('runs on each application’s own policy: two apps from one module, one process', async () => {
    const one = (await start(config(1))).get(Catalog);
    const four = (await start(config(4))).get(Catalog);
    expect([
      await attemptsOf(one, 'search', new Error('down')),
      await attemptsOf(four, 'search', new Error('down')),
    ]).toEqual([1, 4]);
    expect([
      await attemptsOf(one, 'search', new StaleIndexError('s')),
      await attemptsOf(four, 'search', new StaleIndexError('s')),
    ]).toEqual([1, 1]);
  });

  it('applies in Observable mode too', async () => {
    const catalog = (await start(config(3))).get(Catalog);
    const run = async (error: unknown): Promise<number> => {
      catalog.attempts = 0;
      await new Promise<void>((resolve) =>
        catalog.stream(error).subscribe({ error: () => resolve() }),
      );
      return catalog.attempts;
    };
    expect([await run(new StaleIndexError('s')), await run(new Error('down'))]).toEqual([1, 3]);
  });

  it('refuses to start on a bad classifier, naming the class, the method, the value and the rule', async () => {
    @Injectable()
    class BadRules {
      @Resilient('catalog', { classifier: { permanent: [99], base: 'thrift' } as never })
      async find(): Promise<void> {}

      @Resilient('catalog', { classifier: (() => Verdict.permanent) as never })
      async list(): Promise<void> {}
    }
    @Module({ providers: [BadRules] })
    class BadModule {}
    await expect(start(config(3), [BadModule])).rejects.toThrow(
      [
        'Invalid resilience config (3 problems):',
        `  - @Resilient('catalog') on BadRules.find: classifier.base: "thrift" is invalid: must be 'default', 'http' or 'grpc'`,
        "  - @Resilient('catalog') on BadRules.find: classifier.permanent[0]: 99 is invalid: must be an error name or code (a non-empty string) or an HTTP status (an integer in [100, 599])",
        "  - @Resilient('catalog') on BadRules.list: classifier: a function is invalid: must be a Classifier (a rule function goes in Classifier.of(rule) or Classifier.http.with(rule)) or a classifier config",
      ].join('\n'),
    );
  });
});
