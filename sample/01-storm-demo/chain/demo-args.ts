import { parseArgs } from 'node:util';

/** What the storm demo was asked for on its command line. */
export interface DemoArgs {
  readonly quick: boolean;
  readonly json: boolean;
  readonly metrics: boolean;
  readonly help: boolean;
  /** Which acts to run: 1 (one hop, budget on/off), 2 (the chain), or both. */
  readonly acts: readonly (1 | 2)[];
  /** Services in act 2's chain: 3 or 4. */
  readonly hops: 3 | 4;
  /** Attempts per call at every hop of act 2, 2 to 5. */
  readonly attempts: number;
}

/** A command line the demo does not understand; its message names the option, the value and the rule. */
export class DemoArgsError extends Error {
  override readonly name = 'DemoArgsError';
}

/**
 * Reads the demo's options (Node's `parseArgs`, strict): `--quick`, `--json`, `--metrics`,
 * `--help`/`-h`, `--act 1|2` (default both), `--hops 3|4` (default 3) and `--attempts 2..5`
 * (default 3) for act 2 — three hops of three attempts reproduce 27, four hops of four 256 and
 * three of four 64.
 * @throws DemoArgsError for an unknown option, a missing value or a value out of its range
 */
export function parseDemoArgs(argv: readonly string[]): DemoArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        quick: { type: 'boolean' },
        json: { type: 'boolean' },
        metrics: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        act: { type: 'string' },
        hops: { type: 'string' },
        attempts: { type: 'string' },
      },
      strict: true,
    }));
  } catch (error) {
    throw new DemoArgsError((error as Error).message);
  }
  const choice = (
    name: string,
    text: string | boolean | undefined,
    allowed: readonly number[],
    fallback: number,
  ): number => {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (typeof text !== 'string' || !/^\d+$/.test(text) || !allowed.includes(n))
      throw new DemoArgsError(
        `--${name} ${JSON.stringify(text)}: must be one of ${allowed.join(', ')}`,
      );
    return n;
  };
  const act = values.act === undefined ? undefined : choice('act', values.act, [1, 2], 0);
  const hops = choice('hops', values.hops, [3, 4], 3) as 3 | 4;
  const attempts = choice('attempts', values.attempts, [2, 3, 4, 5], 3);
  if ((values.hops !== undefined || values.attempts !== undefined) && act === 1)
    throw new DemoArgsError('--hops and --attempts set up act 2; they do nothing with --act 1');
  if (values.metrics === true && act === 2)
    throw new DemoArgsError(
      '--metrics reads act 1 from its OpenTelemetry exporter; it does nothing with --act 2',
    );
  return {
    quick: values.quick === true,
    json: values.json === true,
    metrics: values.metrics === true,
    help: values.help === true,
    acts: act === undefined ? [1, 2] : [act as 1 | 2],
    hops,
    attempts,
  };
}
