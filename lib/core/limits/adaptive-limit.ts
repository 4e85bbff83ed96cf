/** The settings an adaptive limit runs on (validated, every field filled). */
export interface AdaptiveBounds {
  /** The limit it starts from, an integer in [minimum, maximum]. */
  readonly initial: number;
  /** The lowest the limit goes, an integer >= 1. */
  readonly minimum: number;
  /** The highest the limit goes, an integer >= minimum. */
  readonly maximum: number;
}

/** A window closes at its first sample this long (ms) after it opened, once it holds {@link WINDOW_SAMPLES}. */
export const WINDOW_MS = 250;
/** Samples (successes and drops) a window needs before it may close. */
export const WINDOW_SAMPLES = 10;
/** Windows whose medians the no-load latency is the minimum of (≈ 10 s at 4 windows a second). */
export const BASELINE_WINDOWS = 40;
/** Latency above this multiple of the no-load latency counts as risen (Netflix Gradient2's tolerance is 1.5–2). */
export const TOLERANCE = 2;
/** Drop share above the usual one by more than this (and by three standard errors) counts as a rise in drops. */
export const DROP_MARGIN = 0.05;
/** Multiplicative decrease on drops with latency still within tolerance (AIMD's backoff ratio, Netflix's 0.9). */
export const BACKOFF_RATIO = 0.9;
/** The most one window may cut the limit by (gradient floor). */
export const GRADIENT_FLOOR = 0.5;
/** The limit a probe measures the no-load latency at (Envoy's adaptive concurrency `min_concurrency` default). */
export const PROBE_LIMIT = 3;
/** Samples a probe takes its median from (attempts that began after the probe did). */
export const PROBE_SAMPLES = 20;
/** Windows (≈ 10 s) after a probe before another may start. */
export const PROBE_SPACING = 40;
/** Weight of a window in the usual drop share (an exponential moving average). */
const DROP_WEIGHT = 0.1;
/** Latencies one window keeps for its median (the most recent ones). */
const WINDOW_CAPACITY = 256;

/**
 * The limit discovered from measured latency (DESIGN §3.8; after Netflix concurrency-limits' Gradient
 * and AIMD limits). Samples (every attempt that held a slot, drops included at their duration) are
 * gathered into windows of ≥ 250 ms and ≥ 10 samples (the first closes at its 10th, before the
 * limit's own load can build a queue); at each window's end the limit moves once:
 * - **No-load latency**: the lowest, over the last 40 windows (≈ 10 s), of each window median's upper
 *   confidence bound (two standard errors from the spread of its log-latencies). The lowest plain
 *   median would be biased low by noise — about 0.6 × the true one for windows of 30 samples — and
 *   latency would always seem to have risen.
 * - **Probe** (after Envoy's adaptive concurrency, which samples its minRTT at a low limit, and Netflix
 *   Vegas's periodic reset): a window whose drop share rose where the limit binds, at most once per 40
 *   windows (≈ 10 s), holds the limit at 3 (or `minimum` if higher) until 20 attempts begun since
 *   have ended. Their median replaces the no-load latency (the 40 windows are forgotten: the first
 *   ones may have queued already, at 20 in flight on 5 workers) and their drop share the usual one;
 *   the limit then returns to where it was. Calls beyond 3 in flight are refused meanwhile.
 * - **Congestion**: a window whose drop share (attempt timeouts, Transient and Throttled failures)
 *   rose above the usual share by more than 5 points and three standard errors, *and* whose median rose above 2 × the no-load
 *   latency: queueing in front of the work, ending in timeouts. Either sign alone is the dependency's
 *   own business — a share of requests failing fast, or answers slower for everyone — and a lower
 *   limit would only refuse work it could still serve (in the simulator, shrinking on either alone
 *   refused 46 % of calls in the `slow` scenario and 90 % at 30 % failures).
 * - **Shrink** on congestion, only where the limit bound (a caller queued or was refused, or in-flight
 *   reached it): × `2 × noLoad / median`, clamped to [0.5, 0.9]. Lowering a limit the load does not
 *   reach changes nothing the dependency sees.
 * - **Grow** in a window with answers and no rise in drops, only while the limit is used (in-flight
 *   reached half of it): by `max(1, √limit)`. A quiet application never creeps toward `maximum`, and
 *   a run of identical timeouts (no answer) never grows it.
 * - The usual drop share is a moving average of the full windows that were not congested and whose
 *   median stayed within 2 × the no-load latency (the first full window sets it; the first 10
 *   samples are too few).
 * - Always an integer in [minimum, maximum]. While the event loop is saturated (`Saturation.above`)
 *   the limiter discards the window: nothing is learned.
 * @internal the limiter's
 */
export class AdaptiveLimit {
  private estimate: number;
  private readonly medians = new Float64Array(BASELINE_WINDOWS).fill(Infinity);
  private nextMedian = 0;
  private readonly latencies = new Float64Array(WINDOW_CAPACITY);
  private samples = 0;
  private drops = 0;
  private answered = 0;
  private windowStart: number;
  private peak = 0;
  private bound = false;
  private usualDrops = 0;
  private learnedDrops = false;
  /** Whether the first window closed (it closes at its 10th sample, the others after 250 ms too). */
  private opened = false;
  /** The median the last probe measured (ms), Infinity before one. */
  private probed = Infinity;
  /** Clock reading (ms) the running probe began at; undefined while none runs. */
  private probeSince: number | undefined;
  private readonly probeLatencies = new Float64Array(PROBE_SAMPLES);
  private probeCount = 0;
  private probeDrops = 0;
  /** Windows closed since the last probe ended. */
  private sinceProbe = PROBE_SPACING;

  /**
   * @param bounds its initial limit and bounds
   * @param now clock reading (ms) at which the first window opens
   */
  constructor(
    private bounds: AdaptiveBounds,
    now = 0,
  ) {
    this.estimate = bounds.initial;
    this.windowStart = now;
  }

  /** The current limit, an integer in [minimum, maximum]. */
  get limit(): number {
    const limit = Math.floor(this.estimate);
    return this.probeSince === undefined ? limit : Math.min(limit, this.probeLimit);
  }

  /** Whether a probe runs: the limit is held at {@link PROBE_LIMIT} to measure the no-load latency. */
  get probing(): boolean {
    return this.probeSince !== undefined;
  }

  private get probeLimit(): number {
    return Math.max(this.bounds.minimum, PROBE_LIMIT);
  }

  /** The no-load latency (ms) it measures against, `undefined` before its first window. */
  get noLoadLatency(): number | undefined {
    let lowest = this.probed;
    for (const m of this.medians) if (m < lowest) lowest = m;
    return lowest === Infinity ? undefined : lowest;
  }

  /** Takes new bounds, keeping what it learned; the limit is clamped into them. */
  rebound(bounds: AdaptiveBounds): void {
    this.bounds = bounds;
    this.estimate = Math.min(bounds.maximum, Math.max(bounds.minimum, this.estimate));
  }

  /** In-flight count reached `inflight` (after an admission). */
  admitted(inflight: number): void {
    if (inflight > this.peak) this.peak = inflight;
    if (inflight >= this.estimate) this.bound = true;
  }

  /** A caller found no free slot (queued or refused). */
  refused(): void {
    this.bound = true;
  }

  /**
   * One attempt's sample.
   * @param now clock reading, ms
   * @param latency the attempt's duration, ms (a drop's is not used)
   * @param dropped true for a drop (timeout, Transient or Throttled failure)
   * @returns true when the limit changed
   */
  sample(now: number, latency: number, dropped: boolean): boolean {
    if (this.probeSince !== undefined) return this.probeSample(now, latency, dropped);
    if (dropped) this.drops++;
    else this.answered++;
    this.latencies[this.samples % WINDOW_CAPACITY] = latency;
    this.samples++;
    // The first window closes at its 10th sample: measured before the limit's own load can build a
    // queue in front of the work, it gives the no-load latency a start that is no queueing latency.
    if (this.samples < WINDOW_SAMPLES || (now - this.windowStart < WINDOW_MS && this.opened))
      return false;
    const first = !this.opened;
    this.opened = true;
    return this.closeWindow(now, first);
  }

  /** Forgets the window being gathered (the event loop is saturated: its latencies are the loop's). */
  discard(now: number): void {
    this.samples = 0;
    this.drops = 0;
    this.answered = 0;
    this.peak = 0;
    this.bound = false;
    this.windowStart = now;
    if (this.probeSince !== undefined) {
      this.probeSince = now;
      this.probeCount = 0;
      this.probeDrops = 0;
    }
  }

  /** A sample while a probe runs: only attempts that began after it did count (the others queued). */
  private probeSample(now: number, latency: number, dropped: boolean): boolean {
    if (now - latency < this.probeSince!) return false;
    if (dropped) this.probeDrops++;
    this.probeLatencies[this.probeCount++] = latency;
    if (this.probeCount < PROBE_SAMPLES) return false;
    // What the dependency answers with few attempts in flight is its no-load latency: it replaces
    // what the windows measured under load (all of them, like Netflix Vegas's periodic reset).
    this.probed = quantile(this.probeLatencies.slice().sort(), 0.5);
    this.medians.fill(Infinity);
    // Its drop share is the dependency's own too: windows under load may have taught a higher one.
    this.usualDrops = this.probeDrops / PROBE_SAMPLES;
    this.learnedDrops = true;
    this.probeSince = undefined;
    this.sinceProbe = 0;
    this.discard(now);
    return true;
  }

  private closeWindow(now: number, first: boolean): boolean {
    const before = this.limit;
    const dropShare = this.drops / this.samples;
    const sorted = this.latencies.subarray(0, Math.min(this.samples, WINDOW_CAPACITY)).sort();
    const median = quantile(sorted, 0.5);
    // What a window tells of the no-load latency is its median's upper confidence bound (two
    // standard errors, from the spread of its log-latencies): the lowest of 40 plain medians would be
    // biased low by their noise (≈ 0.6 × the true one for windows of 30 samples), and latency would
    // always seem to have risen.
    const spread =
      (Math.log(Math.max(quantile(sorted, 0.75), 0.1)) -
        Math.log(Math.max(quantile(sorted, 0.25), 0.1))) /
      1.349;
    const vouched = median * Math.exp((2 * 1.2533 * spread) / Math.sqrt(sorted.length));
    const noLoad = Math.min(this.noLoadLatency ?? Infinity, vouched);
    this.medians[this.nextMedian] = vouched;
    this.nextMedian = (this.nextMedian + 1) % BASELINE_WINDOWS;
    const ratio = noLoad > 0 ? median / noLoad : 1;
    // A rise is more than chance: above the usual share by 5 points and by three standard errors of a
    // share over this many samples (at 30 % usual drops and 125 samples, 12 points).
    const usual = this.learnedDrops ? this.usualDrops : 0;
    const margin = Math.max(DROP_MARGIN, 3 * Math.sqrt((usual * (1 - usual)) / this.samples));
    const moreDrops = this.learnedDrops && this.drops >= 2 && dropShare > usual + margin;
    // Overload: drops rising with queueing latency. Either alone is the dependency's own business (a
    // share of requests failing fast, or answers slower for everyone): a lower limit would only
    // refuse work it can still serve.
    const congested = moreDrops && ratio > TOLERANCE;
    const b = this.bounds;
    this.sinceProbe++;
    if (
      moreDrops &&
      this.bound &&
      this.sinceProbe >= PROBE_SPACING &&
      this.limit > this.probeLimit
    ) {
      // Drops rise where the limit binds: before trusting a no-load latency measured under load,
      // measure it at a low limit (Envoy's adaptive concurrency samples its minRTT so).
      const before = this.limit;
      this.probeSince = now;
      this.discard(now);
      return this.limit !== before;
    }
    if (congested) {
      if (this.bound)
        this.estimate = Math.max(
          b.minimum,
          this.estimate * Math.min(BACKOFF_RATIO, Math.max(GRADIENT_FLOOR, TOLERANCE / ratio)),
        );
    } else if (!moreDrops && this.answered > 0 && this.peak * 2 >= this.estimate) {
      this.estimate = Math.min(b.maximum, this.estimate + Math.max(1, Math.sqrt(this.estimate)));
    }
    if (!first && (!this.learnedDrops || (!congested && ratio <= TOLERANCE))) {
      this.usualDrops = this.learnedDrops
        ? this.usualDrops + DROP_WEIGHT * (dropShare - this.usualDrops)
        : dropShare;
      this.learnedDrops = true;
    }
    this.discard(now);
    return this.limit !== before;
  }
}

/** Quantile `q` of sorted `values` (linear between the nearest ranks). */
function quantile(values: Float64Array, q: number): number {
  const at = (values.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.min(values.length - 1, low + 1);
  return values[low]! + (values[high]! - values[low]!) * (at - low);
}
