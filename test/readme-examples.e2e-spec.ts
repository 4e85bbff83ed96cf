import { priceBrownout, provePolicy } from './fixtures/readme-testing-kit.js';

describe('README examples', () => {
  it('the testing-kit example retries once and succeeds', async () => {
    expect(await provePolicy()).toEqual({ value: 'ok', kinds: ['attempt', 'retrying', 'attempt', 'succeeded'], calls: 2 });
  });

  it('the simulator example prices a brownout deterministically', async () => {
    const first = await priceBrownout();
    const second = await priceBrownout();
    expect(first.calls).toBe(6000);
    expect(JSON.stringify(first.toJSON())).toBe(JSON.stringify(second.toJSON()));
    // The figures the README quotes for this example.
    expect([first.availability, first.loadMultiplier.toFixed(2), first.amplification]).toEqual([0.835, '1.04', 1.36]);
    expect(first.toString()).toContain('Availability');
  });
});
