import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Observable, lastValueFrom } from 'rxjs';
import { Ambient, AmbientCriticality, FakeClock } from '../core/index.js';
import { Criticality } from './criticality.decorator.js';
import { PolicyRegistry } from './policy-registry.js';
import { bindRegistry, unbindRegistry } from './resilient-binding.js';
import { CRITICALITY_METADATA } from './resilience.constants.js';
import { Resilient } from './resilient.decorator.js';

class Handlers {
  @Criticality('sheddable')
  async recommend(): Promise<string> {
    return AmbientCriticality.current();
  }

  @Criticality('critical')
  async checkout(): Promise<string> {
    return AmbientCriticality.current();
  }

  @Criticality('sheddable')
  stream(): Observable<string> {
    return new Observable((subscriber) => {
      subscriber.next(AmbientCriticality.current());
      subscriber.complete();
    });
  }

  async unlabeled(): Promise<string> {
    return AmbientCriticality.current();
  }
}

describe('@Criticality', () => {
  const handlers = new Handlers();

  it('runs the method at its level; unlabeled work is critical', async () => {
    expect(await handlers.recommend()).toBe('sheddable');
    expect(await handlers.checkout()).toBe('critical');
    expect(await handlers.unlabeled()).toBe('critical');
    expect(await lastValueFrom(handlers.stream())).toBe('sheddable');
  });

  it('an inbound level lowers it, never raises it', async () => {
    expect(await Ambient.run({ criticality: 'sheddable' }, () => handlers.checkout())).toBe(
      'sheddable',
    );
    expect(
      await Ambient.run({ criticality: Criticality.fromWire('critical-plus') }, () =>
        handlers.recommend(),
      ),
    ).toBe('sheddable');
    expect(Criticality.fromWire('criticalPlus')).toBe('critical');
  });

  it('keeps other metadata, marks the method, and still carries the level helpers', () => {
    expect(Reflect.getMetadata(CRITICALITY_METADATA, Handlers.prototype.recommend)).toBe(
      'sheddable',
    );
    expect(Handlers.prototype.recommend.name).toBe('recommend');
    expect(Criticality.levels).toEqual(['sheddable', 'sheddablePlus', 'critical', 'criticalPlus']);
    expect(() => Criticality('urgent' as never)).toThrow(
      '@Criticality(level): level must be one of sheddable, sheddablePlus, critical, criticalPlus, got urgent',
    );
  });
});

describe('@Criticality with @Resilient and useAmbientCriticality', () => {
  const clock = new FakeClock();
  let registry: PolicyRegistry | undefined;
  afterEach(() => {
    if (registry) unbindRegistry(registry);
  });

  class Calls {
    @Criticality('sheddable')
    @Resilient('p', { returns: 'promise' })
    async above(): Promise<string> {
      throw new Error('down');
    }

    @Resilient('p', { returns: 'promise' })
    @Criticality('sheddable')
    async below(): Promise<string> {
      throw new Error('down');
    }

    @Resilient('p', { returns: 'promise' })
    async plain(): Promise<string> {
      throw new Error('down');
    }
  }

  /** Retries made over 12 failing calls, each in a fresh registry (a bucket of 10 tokens). */
  async function retries(method: 'above' | 'below' | 'plain'): Promise<number> {
    if (registry) unbindRegistry(registry);
    registry = PolicyRegistry.create({
      policies: {
        p: {
          attempts: 2,
          backoff: { type: 'none' },
          budget: { minimumPerSecond: 0 },
          useAmbientCriticality: true,
        },
      },
      clock,
    });
    bindRegistry(registry);
    const calls = new Calls();
    let made = 0;
    const original = registry.get('p');
    for (let i = 0; i < 12; i++) {
      const before = original.bucket()!.level;
      const call = calls[method]().catch(() => undefined);
      await clock.advance(100);
      await call;
      if (original.bucket()!.level < before) made++;
    }
    return made;
  }

  it('sheddable work stops retrying at half the budget, whichever order the decorators are in', async () => {
    expect(await retries('above')).toBe(5);
    expect(await retries('below')).toBe(5);
    expect(await retries('plain')).toBe(10);
  });
});
