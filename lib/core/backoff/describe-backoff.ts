import { Backoff } from './backoff.js';
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
    return {
      type: 'exponential',
      transientBase: fields.transientBase,
      throttledBase: fields.throttledBase!,
      factor: fields.factor!,
      maximumDelay: backoff.maximumDelay,
      jitter,
    };
  }
  return { type: 'custom', maximumDelay: backoff.maximumDelay };
}
