import { Backoff, MeasuredBackoff } from './backoff.js';
import { Jitter } from './jitter.js';

/** A backoff as resolved (ms). `custom` curves are code: only their cap is known. */
export type ResolvedBackoffConfig =
  | {
      type: 'exponential';
      transientBase: number;
      throttledBase: number;
      factor: number;
      maximumDelay: number;
      jitter: 'full' | 'equal' | 'none' | 'custom';
    }
  | {
      type: 'measured';
      transientBase: number;
      throttledBase: number;
      factor: number;
      maximumDelay: number;
      jitter: 'full' | 'equal' | 'none' | 'custom';
      /** The measured base = multiple × the quantile of recent successful latency. */
      multiple: number;
      quantile: number;
      /** The measured base stays within this factor of `transientBase`, either way. */
      spread: number;
    }
  | { type: 'constant'; delay: number }
  | { type: 'none' }
  | { type: 'custom'; maximumDelay: number };

/** What `backoff` is, as plain JSON: its kind and its numbers (ms); a custom curve shows only its cap. */
export function describeBackoff(backoff: Backoff): ResolvedBackoffConfig {
  if (backoff === Backoff.none) return { type: 'none' };
  const fields = backoff as Partial<{
    delay: number;
    transientBase: number;
    throttledBase: number;
    factor: number;
    jitter: Jitter;
  }>;
  if (typeof fields.delay === 'number') return { type: 'constant', delay: fields.delay };
  if (typeof fields.transientBase === 'number') {
    const jitter =
      fields.jitter === Jitter.full
        ? 'full'
        : fields.jitter === Jitter.equal
          ? 'equal'
          : fields.jitter === Jitter.none
            ? 'none'
            : 'custom';
    const curve = {
      transientBase: fields.transientBase,
      throttledBase: fields.throttledBase!,
      factor: fields.factor!,
      maximumDelay: backoff.maximumDelay,
      jitter,
    } as const;
    if (backoff instanceof MeasuredBackoff)
      return {
        type: 'measured',
        ...curve,
        multiple: backoff.multiple,
        quantile: backoff.quantile,
        spread: backoff.spread,
      };
    return { type: 'exponential', ...curve };
  }
  return { type: 'custom', maximumDelay: backoff.maximumDelay };
}
