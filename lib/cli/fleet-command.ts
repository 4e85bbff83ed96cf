import type { Policy } from '../core/index.js';
import { FleetMatrix } from '../testing/simulation/fleet-matrix.js';
import type { CliIo } from './cli-io.js';
import { parseSeeds } from './matrix-command.js';

/** What `nresilience simulate --fleet` was asked for. */
export interface FleetCommandOptions {
  /** `--seeds a,b,c` as written, or `undefined` for seeds 1 and 2. */
  readonly seeds: string | undefined;
  /** Simulated ms of arrivals per run (`--duration`), or `undefined` for 30 s. */
  readonly duration: number | undefined;
  /** Print JSON instead of the table. */
  readonly json: boolean;
}

/**
 * `nresilience simulate --fleet`: the fleet matrix (`FleetMatrix`) — 10 processes sharing a
 * provider's 500/s limit through a store, split per process, unlimited, through a store outage and
 * against a stricter provider — each process running `policy` (`Resilience.default` without
 * `--config`). Progress goes to stderr, the table (or `--json`) to stdout.
 * @returns the exit code (0)
 * @throws UsageError for a bad `--seeds`
 */
export async function fleetCommand(
  policy: Policy | undefined,
  options: FleetCommandOptions,
  io: CliIo,
): Promise<number> {
  const seeds = options.seeds === undefined ? [1, 2] : parseSeeds(options.seeds);
  const report = await FleetMatrix.run(policy, {
    seeds,
    duration: options.duration,
    onProgress: (done, total, scenario, seed) =>
      io.stderr(`fleet matrix ${done}/${total}: ${scenario} · seed ${seed}\n`),
  });
  io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${report.toString()}\n`);
  return 0;
}
