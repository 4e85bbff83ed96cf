import { PolicyConfigError } from '../../core/index.js';
import { AdaptiveThrottle } from './adaptive-throttle.js';

describe('AdaptiveThrottle (SRE client-side throttling, reference model)', () => {
  it('refuses with probability (requests − K·accepts) / (requests + 1)', () => {
    // random 0.5: an attempt is refused exactly when that probability exceeds 0.5.
    const live = AdaptiveThrottle.sre().start(() => 0.5);
    // First attempt: 0 requests, 0 accepts → p = 0 → sent.
    expect(live.admit(0)).toBe(true);
    // Second: p = (1 − 0) / 2 = 0.5, not above 0.5 → sent.
    expect(live.admit(0)).toBe(true);
    // Third: p = 2 / 3 > 0.5 → refused.
    expect(live.admit(0)).toBe(false);
    expect(live.refused).toBe(1);
  });

  it('never refuses while the dependency accepts at least half of what is sent (K = 2)', () => {
    const live = AdaptiveThrottle.sre().start(() => 0);
    let refused = 0;
    for (let i = 0; i < 1000; i++) {
      if (!live.admit(i)) refused++;
      if (i % 2 === 0) live.accept(i);
    }
    expect(refused).toBe(0);
  });

  it('forgets what left its two-minute window', () => {
    const live = AdaptiveThrottle.sre().start(() => 0.999);
    for (let i = 0; i < 1000; i++) live.admit(0); // 1000 requests, no accepts
    expect(live.admit(119_999)).toBe(false); // p = 1000/1001 > 0.999
    expect(live.admit(120_000)).toBe(true); // second 0 left the window: p = 1/2
  });

  it('rejects bad options naming the field', () => {
    expect(() => AdaptiveThrottle.sre({ k: 0.5 })).toThrow(
      new PolicyConfigError('k', 0.5, 'must be a finite number >= 1'),
    );
    expect(() => AdaptiveThrottle.sre({ k: null as never })).toThrow(
      'k: null is invalid: must be a finite number >= 1',
    );
    expect(() => AdaptiveThrottle.sre({ window: 1500 })).toThrow(/window/);
    expect(String(AdaptiveThrottle.sre())).toBe('adaptive throttle K=2 over 120s');
  });
});
