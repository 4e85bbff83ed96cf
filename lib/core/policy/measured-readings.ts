import { MeasuredBackoff } from '../backoff/backoff.js';
import type { ExecutablePolicy } from '../execution/executable-policy.js';

/**
 * What a policy's measured terms read now (DESIGN §3.8), as `policy.measured` returns it; each is
 * `undefined` until it is configured (and `adaptive` is not false) and warm.
 */
export interface MeasuredReadings {
  /**
   * The attempt ceiling in force, ms: `multiple` × the `quantile` of successful attempt durations
   * over the last 5 minutes, once 100 were seen; `undefined` without `attemptCeiling`, while cold, and
   * while it stands aside (too many recent attempts outlasted it).
   */
  readonly attemptCeiling: number | undefined;
  /** `Backoff.measured`'s transient base now, ms (within its spread of the written base); `undefined` without it or while cold. */
  readonly backoffBase: number | undefined;
  /** The hedge threshold, ms (the live quantile of recent latency); `undefined` without a `hedge` or before 20 successes. */
  readonly hedgeThreshold: number | undefined;
  /** The event loop's delay, ms, as the `saturation` guard reads it; `undefined` without one or before its first reading. */
  readonly eventLoopDelay: number | undefined;
}

/** Reads `policy`'s measured terms now. Resolves its hedge and measurements, as a first call would. */
export function measuredReadings(policy: ExecutablePolicy): MeasuredReadings {
  const o = policy.options;
  const now = o.clock.now();
  const measured = policy.measurements();
  const settings = o.attemptCeiling?.settings;
  const ceiling =
    measured === undefined || settings === undefined || measured.standsAside
      ? undefined
      : measured.ceiling(now, settings.multiple, settings.quantile);
  const backoff = o.backoff instanceof MeasuredBackoff ? o.backoff : undefined;
  const backoffBase =
    measured === undefined ||
    backoff === undefined ||
    measured.quantile(now, backoff.quantile) === undefined
      ? undefined
      : backoff.measuredBase((q) => measured.quantile(now, q));
  const hedger = o.adaptive && o.hedge !== undefined ? policy.hedger() : undefined;
  const probe = o.saturation?.probe;
  return {
    attemptCeiling: ceiling,
    backoffBase,
    hedgeThreshold: hedger?.threshold(now),
    eventLoopDelay: probe === undefined || probe.normal === undefined ? undefined : probe.delay,
  };
}
