import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator';
import { checkValue, integerRule } from '../core/internal.js';

/** The largest seed {@link SeededRandom} accepts (2^32 - 1). */
export const MAX_SEED = 0xffff_ffff;

/** A seed: of `SeededRandom`, `Chaos`, a simulation run, the matrix, the CLI's `--seed`. @internal */
export const SEED_RULE = integerRule(0, MAX_SEED, '');

/**
 * A seeded source of uniform numbers in [0, 1) whose output is identical on every platform and Node
 * version: xoroshiro128+ from `pure-rand` (32-bit integer arithmetic only), advanced by one jump
 * (2^64 steps) after seeding so that nearby seeds do not start alike, and read through
 * `uniformFloat64` (53 random bits per draw, two generator steps).
 *
 * `next` is a bound function, so it can be handed to a policy for reproducible jitter:
 * `policy.with({ random: new SeededRandom(42).next })`.
 */
export class SeededRandom {
  private readonly generator: RandomGenerator;

  /**
   * @param seed an integer in [0, 2^32 - 1]
   * @throws PolicyConfigError naming `seed` when it is not such an integer.
   */
  constructor(readonly seed: number) {
    const generator = xoroshiro128plus(checkValue(SEED_RULE, 'seed', seed) | 0);
    generator.jump();
    this.generator = generator;
  }

  /** The next number, uniform in [0, 1) (a multiple of 2^-53). */
  readonly next = (): number => uniformFloat64(this.generator);
}
