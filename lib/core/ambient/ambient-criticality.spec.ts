import { Ambient } from './ambient-context.js';
import { AmbientCriticality } from './ambient-criticality.js';

describe('AmbientCriticality', () => {
  it('run sets the level through awaits; unlabeled is critical; nested runs replace it', async () => {
    expect(AmbientCriticality.current()).toBe('critical');
    const seen = await AmbientCriticality.run('sheddable', async () => {
      await Promise.resolve();
      const outer = AmbientCriticality.current();
      const inner = AmbientCriticality.run('sheddablePlus', () => AmbientCriticality.current());
      return [outer, inner, Ambient.current()?.criticality];
    });
    expect(seen).toEqual(['sheddable', 'sheddablePlus', 'sheddable']);
    expect(() => AmbientCriticality.run('urgent' as never, () => 0)).toThrow(
      'ambient.criticality: "urgent" is invalid',
    );
  });

  it('lower picks the lower level', () => {
    expect(AmbientCriticality.lower('critical', 'sheddable')).toBe('sheddable');
    expect(AmbientCriticality.lower('sheddablePlus', 'criticalPlus')).toBe('sheddablePlus');
  });
});
