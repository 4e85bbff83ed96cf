import type { MachineReading } from '../machine.js';
import type { ChainScenario } from './chain-scenario.js';
import type { ChainRecord } from './run-chain.js';
import type { HopMode } from './protocol.js';

/** One configuration × phase of act 2, as printed and in `--json`. Ratios are per frontend call. */
export interface ChainPhaseSummary {
  readonly phase: string;
  /** Frontend calls sent in the phase. */
  readonly calls: number;
  /** Database requests per frontend call (requests serving the phase's calls / its calls). */
  readonly databasePerCall: number;
  /** Requests per frontend call at each hop, frontend first (1), then the database's. */
  readonly requestsPerCall: readonly number[];
  /** The largest number of database requests in one second of the phase, per frontend call planned in a second. */
  readonly worstSecond: number;
  /** Share of the phase's frontend calls answered 2xx, 0..1. */
  readonly availability: number;
  /** Frontend latency (answered or abandoned), ms. */
  readonly p50: number;
  readonly p99: number;
  /** Requests each hop received marked as nested retries (the inbound context's `nestedRetry`), frontend first. */
  readonly nestedRetries: readonly number[];
  /** Frontend answers by status. */
  readonly statuses: Readonly<Record<string, number>>;
}

/** One configuration's run. */
export interface ChainSummary {
  readonly mode: HopMode;
  readonly phases: readonly ChainPhaseSummary[];
  /** Database requests in each second of the measured window (by arrival), for the chart. */
  readonly databasePerSecond: readonly number[];
  /** Every process's machine reading, by name. */
  readonly machines: Readonly<Record<string, MachineReading>>;
}

const round = (value: number, digits = 2): number => Number(value.toFixed(digits));

/** Nearest-rank quantile of `values` (0 when empty). */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** The figures of one configuration's run. */
export function summarizeChain(record: ChainRecord, scenario: ChainScenario): ChainSummary {
  let start = 0;
  const phases = scenario.phases.map((phase, index): ChainPhaseSummary => {
    const calls = record.calls[index]?.sent ?? 0;
    const per = (n: number | undefined): number => (calls === 0 ? 0 : round((n ?? 0) / calls, 3));
    const received = [
      ...record.hops.map((hop) => hop.received[index]),
      record.database.received[index],
    ];
    let worst = 0;
    for (let s = start; s < start + phase.seconds; s++)
      worst = Math.max(worst, record.database.perSecond[s] ?? 0);
    start += phase.seconds;
    const latencies = record.calls[index]?.latencies ?? [];
    return {
      phase: phase.name,
      calls,
      databasePerCall: per(record.database.received[index]),
      requestsPerCall: received.map(per),
      worstSecond: round(worst / scenario.rate),
      availability: calls === 0 ? 0 : round((record.calls[index]?.succeeded ?? 0) / calls, 4),
      p50: Math.round(quantile(latencies, 0.5)),
      p99: Math.round(quantile(latencies, 0.99)),
      nestedRetries: record.hops.map((hop) => hop.nested[index] ?? 0),
      statuses: record.calls[index]?.statuses ?? {},
    };
  });
  const seconds = Array.from({ length: start }, (_, s) => record.database.perSecond[s] ?? 0);
  return { mode: record.mode, phases, databasePerSecond: seconds, machines: record.machines };
}

const LABEL: Record<HopMode, string> = { naive: 'naive retries', defaults: 'library defaults' };

/**
 * Act 2's table: per configuration and phase, database requests per frontend call, requests per
 * call at each hop, the worst second, frontend availability and p50/p99, nested-retry records per hop.
 */
export function chainTable(runs: readonly ChainSummary[], hops: readonly string[]): string {
  const header = [
    'configuration',
    'phase',
    'db req/call',
    `per call: ${[...hops, 'database'].join(' → ')}`,
    'worst s',
    'frontend 2xx',
    'p50',
    'p99',
    'nested-retry records',
  ];
  const rows = runs.flatMap((run) =>
    run.phases.map((p) => [
      LABEL[run.mode],
      p.phase,
      p.databasePerCall.toFixed(2),
      p.requestsPerCall.map((r) => r.toFixed(2)).join(' → '),
      p.worstSecond.toFixed(1),
      `${(p.availability * 100).toFixed(1)}%`,
      `${p.p50} ms`,
      `${p.p99} ms`,
      run.mode === 'naive' ? '- (no library)' : p.nestedRetries.join(' / '),
    ]),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
