import { monitorEventLoopDelay } from 'node:perf_hooks';
import { PolicyConfigError } from '../errors.js';
import { numberRule } from '../rules/value-rule.js';
import { type Clock, SystemClock } from '../time/clock.js';

/** Below this event-loop delay (ms) the loop never counts as saturated (DESIGN §3.8). */
export const SATURATION_FLOOR_MS = 20;
/** The probe is read at most this often (ms): 4 readings a second (DESIGN §3.8). */
export const PROBE_PERIOD_MS = 250;
/** Readings the delay is the maximum of (≈ 1 s): a loop blocked 200 ms every 500 ms reads ≈ 200 ms. */
export const PROBE_READINGS = 4;
/**
 * Share of the threshold an episode must fall under to end (hysteresis): a busy loop hovering about
 * the floor or the multiple stays one episode instead of one per crossing.
 */
export const SATURATION_EXIT_SHARE = 0.5;
/**
 * How long (ms) the hysteresis alone may hold an episode: once the delay has not been above the full
 * threshold for this long (8 readings), the episode ends even if the delay stays between half the
 * threshold and the threshold — a loop that settles a little slower than before is learned as its new
 * normal instead of being saturated for ever.
 */
export const SATURATION_HOLD_MS = 2000;
/** Weight of one reading in the loop's normal delay (a moving average learned while not saturated). */
const NORMAL_WEIGHT = 0.05;
/** Sampling resolution of `monitorEventLoopDelay`, ms (Node's default). */
const RESOLUTION_MS = 10;

/** `saturation` (`Saturation.above(multiple)` and config): a multiple of the loop's normal delay. */
export const SATURATION_RULE = numberRule(
  "must be a finite number > 1 (a multiple of the event loop's normal delay, e.g. 5)",
  (v) => v > 1,
);

/** Where the probe reads the loop's delay: the largest delay seen since the last reset, in nanoseconds. */
export interface DelaySource {
  /** Largest delay since the last {@link DelaySource.reset}, ns (`monitorEventLoopDelay().max`). */
  readonly max: number;
  reset(): void;
}

/**
 * An event-loop delay probe (DESIGN §3.8): reads a delay source at most every 250 ms, when asked
 * (no timer of its own), and keeps the loop's delay as the largest of the last 4 readings, in ms
 * (the source reports nanoseconds). Its normal is a moving average of the delays read while not
 * saturated. {@link EventLoopProbe.saturated} answers whether the delay is above `multiple` × normal
 * and above the 20 ms floor.
 */
export class EventLoopProbe {
  private readonly readings = new Float64Array(PROBE_READINGS);
  private next = 0;
  private readAt = Number.NEGATIVE_INFINITY;
  // When the delay was last above the full threshold of the smallest multiple asked for.
  private overAt = Number.NEGATIVE_INFINITY;
  private delayMs = 0;
  private normalMs = Number.NaN;
  private episodes = 0;
  private inEpisode = false;
  private multiple = Infinity;

  /**
   * @param source the delay source (the process-wide instance uses `monitorEventLoopDelay`)
   * @param clock when to read (ms)
   */
  constructor(
    private readonly source: () => DelaySource,
    private readonly clock: Clock = SystemClock.instance,
  ) {}

  /** The loop's delay now, ms (largest of the last readings), 0 before the first reading. */
  get delay(): number {
    this.read();
    return this.delayMs;
  }

  /** The loop's own normal delay, ms; `undefined` before the first reading. */
  get normal(): number | undefined {
    this.read();
    return this.normalMs === this.normalMs ? this.normalMs : undefined;
  }

  /** Saturation episodes begun so far (one `saturationDetected` event each). */
  get episode(): number {
    this.read();
    return this.episodes;
  }

  /**
   * Whether the loop is saturated: its delay above `multiple` × its normal and above the floor — or,
   * for a caller that found it saturated last time (`holding`), still above half of that and above
   * the full threshold within the last 2 s (hysteresis, bounded): one busy phase is one episode.
   * @param multiple the policy's `Saturation.above(multiple)`
   * @param holding whether the caller's last answer was true; default false
   */
  saturated(multiple: number, holding = false): boolean {
    // The smallest multiple any policy asked for decides what an episode is.
    if (multiple < this.multiple) this.multiple = multiple;
    this.read();
    return this.over(multiple, holding);
  }

  private over(multiple: number, holding: boolean): boolean {
    const normal = this.normalMs;
    if (normal !== normal) return false;
    const threshold = Math.max(SATURATION_FLOOR_MS, multiple * normal);
    if (this.delayMs > threshold) return true;
    return (
      holding &&
      this.readAt - this.overAt <= SATURATION_HOLD_MS &&
      this.delayMs > SATURATION_EXIT_SHARE * threshold
    );
  }

  private read(): void {
    const now = this.clock.now();
    if (now - this.readAt < PROBE_PERIOD_MS) return;
    const source = this.source();
    if (this.readAt === Number.NEGATIVE_INFINITY) {
      // The first read starts the measurement: what the source saw before is no reading of ours.
      this.readAt = now;
      source.reset();
      return;
    }
    this.readAt = now;
    const reading = Number.isFinite(source.max) ? source.max / 1e6 : 0;
    source.reset();
    this.readings[this.next] = reading;
    this.next = (this.next + 1) % PROBE_READINGS;
    let delay = 0;
    for (const r of this.readings) if (r > delay) delay = r;
    this.delayMs = delay;
    const normal = this.normalMs;
    if (normal === normal && delay > Math.max(SATURATION_FLOOR_MS, this.multiple * normal))
      this.overAt = now;
    const saturated = this.over(this.multiple, this.inEpisode);
    if (!saturated)
      this.normalMs =
        this.normalMs === this.normalMs
          ? this.normalMs + NORMAL_WEIGHT * (reading - this.normalMs)
          : reading;
    if (saturated && !this.inEpisode) this.episodes++;
    this.inEpisode = saturated;
  }
}

let histogram: DelaySource | undefined;

/**
 * The one process-wide `monitorEventLoopDelay` histogram, enabled on first use (its timer is unref'd
 * by Node). It records the interval between its own timer's firings, which is at least its
 * resolution; the delay is what exceeds it (an idle loop reads ≈ 0, not 10 ms).
 */
function processHistogram(): DelaySource {
  if (histogram === undefined) {
    const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    h.enable();
    histogram = {
      get max() {
        return Math.max(0, h.max - RESOLUTION_MS * 1e6);
      },
      reset: () => h.reset(),
    };
  }
  return histogram;
}

/** The process-wide probe every policy with `saturation` shares. */
export const processProbe = new EventLoopProbe(processHistogram);

/**
 * A policy's `saturation` option (DESIGN §3.8): while the event loop's delay is above `multiple` ×
 * its own normal (and above 20 ms), measured terms stop learning — the adaptive limit, the breaker's
 * latency baseline — because the latencies they would learn are the loop's, not the dependency's.
 * Nothing is refused or delayed by it. A `saturationDetected` event marks each episode.
 */
export class Saturation {
  private constructor(
    /** The multiple of the loop's normal delay above which it is saturated. */
    readonly multiple: number,
    /** The probe it reads (the process-wide one unless a test gives its own). */
    readonly probe: EventLoopProbe,
  ) {}

  /**
   * Saturated while the loop's delay is above `multiple` × its normal.
   * @param multiple a finite number > 1 (5 is DESIGN's suggestion)
   * @param probe the probe to read; default the process-wide one
   * @throws PolicyConfigError naming `saturation` unless `multiple` is a finite number > 1
   */
  static above(multiple: number, probe: EventLoopProbe = processProbe): Saturation {
    if (!SATURATION_RULE.accepts(multiple))
      throw new PolicyConfigError('saturation', multiple, SATURATION_RULE.rule);
    return new Saturation(multiple, probe);
  }

  /**
   * Whether the loop is saturated now (once saturated, until the delay falls under half the threshold,
   * or has stayed under the threshold for 2 s).
   */
  get saturated(): boolean {
    return (this.holding = this.probe.saturated(this.multiple, this.holding));
  }

  /** The last answer of {@link Saturation.saturated} (its hysteresis). */
  private holding = false;

  /**
   * Whether a saturation episode began that this value has not yet reported: true once per episode
   * (the executor then emits `saturationDetected`), false otherwise.
   * @internal
   */
  claimEpisode(): boolean {
    const episode = this.probe.episode;
    if (episode === this.reported) return false;
    this.reported = episode;
    return true;
  }

  /** The episode last reported by {@link claimEpisode}. */
  private reported = 0;
}
