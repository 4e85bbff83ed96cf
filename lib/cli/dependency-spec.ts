import { parseDuration } from '../config/policy-config.js';
import { PolicyConfigError } from '../core/index.js';
import { UsageError } from './usage-error.js';

/**
 * The modelled dependency of `nresilience simulate`, as `--dependency` gives it; unset fields keep
 * the scenario's healthy dependency (p50 20 ms, p99 200 ms, 100 workers per 500 calls/s, 150 ms
 * server timeout, unbounded queue, no failures). Durations in ms.
 */
export interface DependencyModel {
  /** Median service time, ms > 0. */
  readonly p50?: number;
  /** 99th-percentile service time, ms >= p50. Unset: 10 × p50 (the healthy dependency's shape). */
  readonly p99?: number;
  /** Server-side timeout, ms > 0, or `Infinity` (`timeout=none`). */
  readonly timeout?: number;
  /** Requests served at once, an integer >= 1 (not scaled with `--rate` when given). */
  readonly workers?: number;
  /** Requests that may wait for a worker, an integer >= 0, or `Infinity` (`queue=none`). */
  readonly queue?: number;
  /** Share of requests failing for the whole run, in [0, 1] (combined with the scenario's faults). */
  readonly failures?: number;
}

const KEYS = ['p50', 'p99', 'timeout', 'workers', 'queue', 'failures'] as const;

/**
 * Reads `--dependency p50=40ms,p99=400ms,timeout=1s,workers=200,failures=0.1` (any subset, any order;
 * durations as ms numbers or strings such as `400ms`, `1s`).
 * @throws UsageError naming `--dependency <key>`, the value and the rule for an unknown key, a
 *   malformed pair or an out-of-range value (p99 below p50 included)
 */
export function parseDependencySpec(spec: string): DependencyModel {
  const model: { -readonly [K in keyof DependencyModel]: DependencyModel[K] } = {};
  for (const pair of spec.split(',')) {
    const eq = pair.indexOf('=');
    if (eq <= 0)
      throw new UsageError(
        '--dependency',
        spec,
        `must be key=value pairs separated by commas, keys ${KEYS.join(', ')}`,
      );
    const key = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    const field = `--dependency ${key}`;
    switch (key) {
      case 'p50':
      case 'p99':
        model[key] = duration(field, value);
        break;
      case 'timeout':
        model.timeout = value === 'none' ? Infinity : duration(field, value);
        break;
      case 'workers':
        model.workers = integer(field, value, 1);
        break;
      case 'queue':
        model.queue = value === 'none' ? Infinity : integer(field, value, 0);
        break;
      case 'failures': {
        const share = Number(value);
        if (!/^\d+(\.\d+)?$/.test(value) || share > 1)
          throw new UsageError(field, value, 'must be a share of requests in [0, 1], e.g. 0.1');
        model.failures = share;
        break;
      }
      default:
        throw new UsageError('--dependency', key, `unknown key: must be one of ${KEYS.join(', ')}`);
    }
  }
  if (model.p50 !== undefined && model.p99 !== undefined && model.p99 < model.p50) {
    throw new UsageError('--dependency p99', model.p99, `must be at least p50 (${model.p50} ms)`);
  }
  return model;
}

function duration(field: string, value: string): number {
  try {
    return parseDuration(value, field, { positive: true });
  } catch (error) {
    if (error instanceof PolicyConfigError) throw new UsageError(field, value, error.rule);
    throw error;
  }
}

function integer(field: string, value: string, minimum: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < minimum || !Number.isSafeInteger(n))
    throw new UsageError(field, value, `must be an integer >= ${minimum}`);
  return n;
}
