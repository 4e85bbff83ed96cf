import { describe, expect, it } from '@jest/globals';
import { FakeClock } from '../core/index.js';
import { PolicyRegistry } from './policy-registry.js';
import { ResilienceConfigError } from '../config/resilience-config.error.js';

const down = () => Promise.reject(new Error('down'));

function create() {
  const clock = new FakeClock();
  const registry = PolicyRegistry.create({
    policies: {
      payments: { attempts: 1, budget: false, breaker: { breakDuration: '10s', jitter: 'none' } },
      search: { preset: 'http' },
      plain: {},
    },
    clock,
  });
  return { clock, registry };
}

describe('PolicyRegistry breakers', () => {
  it('pins one breaker per name from config; the http preset has one, the default none', () => {
    const { registry } = create();
    expect(registry.breaker('payments')!.settings.breakDuration).toBe(10_000);
    expect(registry.breaker('search')!.settings.breakDuration).toBe(1000);
    expect(registry.breaker('plain')).toBeUndefined();
  });

  it('keeps breaker state across a reload and adopts the new settings', async () => {
    const { registry } = create();
    const payments = registry.handle('payments');
    for (let i = 0; i < 5; i++) await payments.tryRun(down);
    const breaker = registry.breaker('payments')!;
    expect(breaker.state).toBe('open');
    expect(breaker.retryAfter()).toBe(10_000);
    registry.reload({
      policies: {
        payments: { attempts: 2, budget: false, breaker: { breakDuration: '20s', jitter: 'none' } },
        search: {},
        plain: {},
      },
    });
    expect(registry.breaker('payments')).toBe(breaker);
    expect(breaker.state).toBe('open');
    expect(breaker.settings.breakDuration).toBe(20_000);
    expect(registry.get('payments').options.attempts).toBe(2);
  });

  it('rejects a bad breaker config naming the full path and keeps the old policies', () => {
    const { registry } = create();
    const before = registry.get('payments');
    const attempt = () =>
      registry.reload({
        policies: { payments: { breaker: { breakDuration: '-5s' } }, search: {}, plain: {} },
      });
    expect(attempt).toThrow(ResilienceConfigError);
    expect(attempt).toThrow('policies.payments.breaker.breakDuration: "-5s" is invalid');
    expect(() =>
      registry.reload({
        policies: { payments: { breaker: { trips: 3 } as never }, search: {}, plain: {} },
      }),
    ).toThrow('policies.payments.breaker.trips: 3 is invalid: is not a known breaker setting');
    expect(() =>
      registry.reload({
        policies: { payments: { breaker: 'yes' as never }, search: {}, plain: {} },
      }),
    ).toThrow(
      'policies.payments.breaker: "yes" is invalid: must be true, false or an object of breaker settings',
    );
    expect(registry.get('payments')).toBe(before);
  });
});
