import type { Policy } from '../core/index.js';
import { CHAIN_SCENARIOS, ChainMatrix } from '../testing/simulation/chain-matrix.js';
import type { CliIo } from './cli-io.js';
import { parseSeeds } from './matrix-command.js';
import { UsageError } from './usage-error.js';

/** What `nresilience simulate --matrix --hops <n>` was asked for. */
export interface ChainMatrixCommandOptions {
  /** Services in the chain. */
  readonly hops: number;
  /** `--seeds a,b,c` as written, or `undefined` for seed 1. */
  readonly seeds: string | undefined;
  /** `--scenarios a,b` as written, or `undefined` for every chain scenario. */
  readonly scenarios: string | undefined;
  /** Frontend calls per second. */
  readonly rate: number;
  /** Print JSON instead of the table. */
  readonly json: boolean;
}

/**
 * `nresilience simulate --matrix --hops <n>`: the chain matrix (`ChainMatrix`) — n services that each
 * run the user's policy, beside the same chain of naive retry loops. Progress goes to stderr, the
 * table (or `--json`) to stdout.
 * @returns the exit code (0)
 * @throws UsageError for a bad `--seeds` or a `--scenarios` name that is not a chain scenario
 */
export async function chainMatrixCommand(
  policy: Policy,
  options: ChainMatrixCommandOptions,
  io: CliIo,
): Promise<number> {
  const seeds = options.seeds === undefined ? [1] : parseSeeds(options.seeds);
  let scenarios: string[] | undefined;
  if (options.scenarios !== undefined) {
    scenarios = options.scenarios.split(',').map((p) => p.trim());
    const known = CHAIN_SCENARIOS.map((s) => s.name);
    const unknown = scenarios.find((n) => !known.includes(n));
    if (unknown !== undefined)
      throw new UsageError(
        '--scenarios',
        unknown,
        `must be among ${known.join(', ')} (the chain matrix's scenarios)`,
      );
  }
  const report = await ChainMatrix.run(policy, {
    hops: options.hops,
    seeds,
    scenarios,
    rate: options.rate,
    onProgress: (done, total, scenario, variant, seed) =>
      io.stderr(`chain matrix ${done}/${total}: ${scenario} · ${variant} · seed ${seed}\n`),
  });
  io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${report.toString()}\n`);
  return 0;
}
