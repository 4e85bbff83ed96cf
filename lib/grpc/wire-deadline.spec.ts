import { WIRE_DEADLINE_SLACK_MS, wireDeadline } from './wire-deadline.js';

describe('wireDeadline', () => {
  it('is the tighter of the attempt bound and the outer time left, plus 50 ms', () => {
    expect(WIRE_DEADLINE_SLACK_MS).toBe(50);
    expect(wireDeadline(400, Infinity)).toBe(450);
    expect(wireDeadline(400, 120)).toBe(170);
    expect(wireDeadline(Infinity, 120)).toBe(170);
  });

  it('is Infinity when nothing bounds the attempt', () => {
    expect(wireDeadline(Infinity, Infinity)).toBe(Infinity);
  });

  it.each([
    [0, Infinity],
    [400, 0],
    [400, -5],
    [Number.NaN, 100],
  ])('is undefined (never on the wire) for bound %j, outer %j', (bound, outer) => {
    expect(wireDeadline(bound, outer)).toBeUndefined();
  });
});
