import { describe, expect, it } from '@jest/globals';
import { FakeClock } from '../core/index.js';
import { PolicyRegistry } from './policy-registry.js';

describe('registry.explain(name)', () => {
  it('a keyed name: the template’s terms, then one line per key with its breaker and budget', async () => {
    const clock = new FakeClock();
    const registry = PolicyRegistry.create({
      policies: {
        billing: {
          attempts: 2,
          backoff: { type: 'none' },
          breaker: true,
          scope: { maximumKeys: 4 },
        },
      },
      clock,
    });
    const scope = registry.scope('billing')!;
    await scope.for('acme').run(async () => 'ok');
    await scope
      .for('globex')
      .run(() => Promise.reject(new Error('down')))
      .catch(() => undefined);
    const explained = registry.explain('billing');
    expect(explained.keys).toEqual([
      'acme: breaker closed, budget 0 % spent',
      'globex: breaker closed, budget 3 % spent',
    ]);
    expect(explained.toString().split('\n').slice(-3)).toEqual([
      '  keys (2)',
      '    acme: breaker closed, budget 0 % spent',
      '    globex: breaker closed, budget 3 % spent',
    ]);
    expect(explained.term('attempts')!.configured).toBe('2 in total (1 retry)');
  });

  it('an unknown name throws as get does', () => {
    const registry = PolicyRegistry.create({ policies: { billing: {} } });
    expect(() => registry.explain('ledger')).toThrow(/ledger/);
  });
});
