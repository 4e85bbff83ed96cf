import type { Verdict } from '../classification/verdict.js';
import type { Clock } from '../time/clock.js';
import { RetryEvidence, type RetryRegime } from './retry-evidence.js';
import { TokenBucket, type RetryBudgetOptions } from './token-bucket.js';

/** Tokens a successful retry gives back while retries work: at 40 % effectiveness retries pay for themselves. */
export const RETRY_REFUND = 2.5;
/** Call tickets one logical call earns while retries fail; a retry then needs a whole one. */
const TICKET_PER_CALL = 0.1;
/** Tickets held at most (and at the start). */
const TICKETS_HELD = 1;
/** Ms of granted retries the credit may reach (one second's worth). */
const CREDIT_WINDOW = 1000;
/** Slack for summed fractions (ten tickets of 0.1 must fund a retry). */
const EPSILON = 1e-9;

/**
 * The default retry budget's state (`RetryBudget.automatic`, DESIGN §3.5): a {@link TokenBucket}
 * whose rules follow what retries are doing ({@link RetryEvidence}), so the budget costs nothing
 * while retries succeed and still stops a retry storm when they do not:
 * - `working` (retries succeed ≥ 40 % and ≥ 0.7 × as often as first attempts, no strain): a retry
 *   goes on credit — the balance may fall below zero by at most the retries granted in the last
 *   whole second (never less than the floor's per-second rate) — and each successful retry re-funds 2.5
 *   tokens (`RETRY_REFUND`), first-attempt successes `fraction` as usual;
 * - `strained` (retries succeed but successful retries are slower than 2 × baseline, or > 25 %
 *   are Throttled or attempt timeouts): exactly the static bucket — a whole token up front, `fraction`
 *   per success, the floor `minimumPerSecond`, 10 s of it held;
 * - `failing` (retries mostly fail, or first attempts just fell sharply): the static bucket, and a
 *   retry also needs a call ticket — each logical call earns 0.1, at
 *   most 1 is held — so retries stay below a tenth of the calls even where the floor would dominate
 *   (a dead dependency at 2 calls/s).
 * Until 20 retries were seen it is `strained`: a fresh budget is the static bucket.
 * `Sheddable` work spends only while at least half the capacity would remain, in every regime.
 */
export class AdaptiveTokenBucket extends TokenBucket {
  /** The evidence the regime is read from. */
  readonly evidence = new RetryEvidence();
  /** This state reads the durations of retries: the executor times them. */
  override readonly timesRetries: boolean = true;
  private tickets = TICKETS_HELD;
  private ticketTaken = false;
  private windowStart: number;
  private grantedNow = 0;
  private grantedBefore = 0;
  private callsNow = 0;
  private callsBefore = 0;

  /**
   * @param options `fraction` (tokens per success, default 0.1) and `minimumPerSecond` (floor, default 3)
   * @param clock the clock the floor accrues on
   * @throws PolicyConfigError when `fraction` is outside [0, 1] or `minimumPerSecond` is negative.
   */
  constructor(options: RetryBudgetOptions, clock: Clock) {
    super(options, clock);
    this.windowStart = clock.now();
  }

  /** The regime the evidence gives now. */
  get regime(): RetryRegime {
    return this.evidence.regime;
  }

  /** Tokens available now, never below 0 (a balance on credit reads 0). */
  override get level(): number {
    const level = super.level;
    return level > 0 ? level : 0;
  }

  /** A logical call started: it earns a call ticket (0.1, at most 1 held). */
  override recordCall(): void {
    this.callsNow++;
    if (this.tickets < TICKETS_HELD) {
      const tickets = this.tickets + TICKET_PER_CALL;
      this.tickets = tickets > TICKETS_HELD ? TICKETS_HELD : tickets;
    }
  }

  /** Weighs the attempt as evidence; a success deposits (2.5 for a retry while retries work, else `fraction`). */
  override recordAttempt(
    attempt: number,
    verdict: Verdict,
    duration: number,
    error: unknown,
  ): void {
    const evidence = this.evidence;
    evidence.record(attempt, verdict, duration, error);
    if (verdict.kind !== 'Ok') return;
    const tokens =
      this.tokens + (attempt > 1 && evidence.regime === 'working' ? RETRY_REFUND : this.fraction);
    this.tokens = tokens > this.cap ? this.cap : tokens;
  }

  /**
   * Funds one retry under the current regime (see the class), or refuses it (nothing spent).
   * @param sheddable Sheddable work spends only while at least half the capacity would remain.
   */
  override tryAcquire(sheddable = false): boolean {
    const now = this.clock.now();
    this.refill(now);
    this.roll(now);
    const regime = this.evidence.regime;
    const floor = sheddable ? this.cap / 2 : regime === 'working' ? -this.credit() : 0;
    if (this.tokens - 1 < floor - EPSILON) return false;
    const ticket = regime === 'failing';
    if (ticket) {
      if (this.tickets < TICKETS_HELD - EPSILON) return false;
      this.tickets = 0;
    }
    this.ticketTaken = ticket;
    this.tokens -= 1;
    if (regime !== 'working' && this.tokens < 0) this.tokens = 0;
    this.grantedNow++;
    return true;
  }

  /** Gives back the token (and the call ticket) of the retry last funded: it never reached the dependency. */
  override refund(): void {
    super.refund();
    if (this.ticketTaken) {
      this.ticketTaken = false;
      this.tickets = TICKETS_HELD;
    }
    if (this.grantedNow > 0) this.grantedNow--;
  }

  /** Whether a retry could be funded now under the current regime, without spending. */
  override get canFundRetry(): boolean {
    const now = this.clock.now();
    this.refill(now);
    this.roll(now);
    const regime = this.evidence.regime;
    const funded = this.tokens - 1 >= (regime === 'working' ? -this.credit() : 0) - EPSILON;
    return funded && (regime !== 'failing' || this.tickets >= TICKETS_HELD - EPSILON);
  }

  /**
   * Ms until a retry could be funded: the floor's time for the missing part of a token, and while
   * retries fail, the calls still needed for a ticket at last second's call rate (`undefined` when
   * no call came in the last second, or the floor is 0 and a token is missing).
   */
  override retryAfter(): number | undefined {
    const now = this.clock.now();
    this.refill(now);
    this.roll(now);
    const regime = this.evidence.regime;
    const missing = 1 - this.tokens + (regime === 'working' ? -this.credit() : 0);
    let wait = 0;
    if (missing > EPSILON) {
      if (this.perMs === 0) return undefined;
      wait = missing / this.perMs;
    }
    if (regime === 'failing' && this.tickets < TICKETS_HELD - EPSILON) {
      const calls = Math.ceil((TICKETS_HELD - this.tickets) / TICKET_PER_CALL - EPSILON);
      if (this.callsBefore === 0) return undefined;
      const ticketWait = (calls * CREDIT_WINDOW) / this.callsBefore;
      if (ticketWait > wait) wait = ticketWait;
    }
    return wait;
  }

  /**
   * Credit available while retries work: the retries granted in the last whole second (never the
   * current one, which would let the credit grow with itself), at least the floor's rate.
   */
  private credit(): number {
    const floor = this.perMs * CREDIT_WINDOW;
    return this.grantedBefore > floor ? this.grantedBefore : floor;
  }

  /** Starts a new one-second window of granted retries and calls when the current one is over. */
  private roll(now: number): void {
    const elapsed = now - this.windowStart;
    if (elapsed < CREDIT_WINDOW) return;
    const adjacent = elapsed < 2 * CREDIT_WINDOW;
    this.grantedBefore = adjacent ? this.grantedNow : 0;
    this.callsBefore = adjacent ? this.callsNow : 0;
    this.grantedNow = 0;
    this.callsNow = 0;
    this.windowStart = adjacent ? this.windowStart + CREDIT_WINDOW : now;
  }
}
