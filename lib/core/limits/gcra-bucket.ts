/** Slack in comparisons of clock readings: intervals such as 1000 / 3 ms are not exact in binary. */
const EPSILON = 1e-6;

/**
 * The generic cell rate algorithm (GCRA) for one bucket: a token every `interval` ms, at most `burst`
 * at once. Its whole state is one number, the theoretical arrival time `tat` of the next token once the
 * bucket is spent: a take at `now` is allowed when `max(tat, now) + interval - now <= burst × interval`.
 * Chosen over a counting token bucket because there is nothing to refill (no timer, no per-read
 * arithmetic beyond one comparison), fractional rates are exact, and the same one number is what the
 * shared store keeps, so local and fleet limits run the same rule.
 * @internal the rate limiter's
 */
export class GcraBucket {
  private tat: number;
  private interval: number;
  private capacity: number;

  /**
   * @param limit tokens per `per` ms
   * @param per ms
   * @param burst tokens that may be taken at once
   * @param now the clock reading it starts at (full)
   */
  constructor(limit: number, per: number, burst: number, now: number) {
    this.interval = per / limit;
    this.capacity = burst * this.interval;
    this.tat = now;
  }

  /** ms between two tokens. */
  get spacing(): number {
    return this.interval;
  }

  /** Takes one token when one is there at `now`. @returns whether it was taken */
  take(now: number): boolean {
    const base = this.tat > now ? this.tat : now;
    if (base + this.interval - now > this.capacity + EPSILON) return false;
    this.tat = base + this.interval;
    return true;
  }

  /** Takes the next token whatever it costs. @returns ms from `now` until it is due (0: now) */
  reserve(now: number): number {
    const wait = this.nextIn(now);
    this.tat = (this.tat > now ? this.tat : now) + this.interval;
    return wait;
  }

  /** Gives back a token taken or reserved (a waiter that left before it was due). */
  giveBack(): void {
    this.tat -= this.interval;
  }

  /** ms from `now` until the next token is due; 0 when one is there. */
  nextIn(now: number): number {
    const base = this.tat > now ? this.tat : now;
    const wait = base + this.interval - this.capacity - now;
    return wait > EPSILON ? wait : 0;
  }

  /** Whole tokens that could be taken at `now`. */
  available(now: number): number {
    const base = this.tat > now ? this.tat : now;
    return Math.floor((this.capacity - (base - now)) / this.interval + EPSILON);
  }

  /**
   * Takes a new rate, keeping what was spent: the tokens owed (the time `tat` runs ahead of `now`, in
   * tokens) are owed at the new rate, so a reload neither refills nor empties the bucket; a smaller
   * burst caps what was saved up.
   */
  reconfigure(limit: number, per: number, burst: number, now: number): void {
    const owed = this.tat > now ? (this.tat - now) / this.interval : 0;
    this.interval = per / limit;
    this.capacity = burst * this.interval;
    this.tat = now + Math.min(owed, burst) * this.interval;
  }
}

/** A lease decision of the shared GCRA (the same arithmetic as the Redis store's script). */
export interface LeaseDecision {
  /** The bucket's theoretical arrival time after the decision (unchanged when refused). */
  readonly tat: number;
  /** Tokens granted: all of `count`, or 0. */
  readonly granted: number;
  /** ms from `now` until the granted tokens may be spent (0: now). */
  readonly validIn: number;
  /** ms from `now` until a refused lease would fit the horizon (0 when granted). */
  readonly retryAfter: number;
}

/**
 * Reserves a lease of `count` tokens on a shared GCRA bucket: placed after every token already
 * granted, valid when its last token conforms (`max(tat, now) + count × interval - burst × interval`),
 * refused when that is more than `horizon` ms ahead. `count` must be at most `burst`.
 * @param tat the bucket's theoretical arrival time (ms, `now`'s clock; anything <= now for a full bucket)
 * @param now the store's clock reading, ms
 */
export function reserveLease(
  tat: number,
  now: number,
  count: number,
  limit: number,
  per: number,
  burst: number,
  horizon: number,
): LeaseDecision {
  const interval = per / limit;
  const base = tat > now ? tat : now;
  const next = base + count * interval;
  const validIn = next - burst * interval - now;
  if (validIn > horizon + EPSILON)
    return { tat, granted: 0, validIn: 0, retryAfter: validIn - horizon };
  return { tat: next, granted: count, validIn: validIn > EPSILON ? validIn : 0, retryAfter: 0 };
}
