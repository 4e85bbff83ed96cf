import { describe, expect, it } from '@jest/globals';
import { DemoArgsError, parseDemoArgs } from '../sample/01-storm-demo/chain/demo-args.js';
import {
  QUICK_CHAIN,
  chainSeconds,
  hopNames,
  phaseIndexAt,
} from '../sample/01-storm-demo/chain/chain-scenario.js';
import {
  type ChainPhaseSummary,
  type ChainSummary,
  chainTable,
  quantile,
  summarizeChain,
} from '../sample/01-storm-demo/chain/chain-summary.js';
import { chainLimits, judgeChain, worstKind } from '../sample/01-storm-demo/chain/chain-verdict.js';
import { chainChartSvg } from '../sample/01-storm-demo/chain/chart.js';
import type { MachineReading } from '../sample/01-storm-demo/machine.js';

/** Act 2 of the storm demo, piece by piece: its options, its figures, its verdict and its chart. */

describe('storm demo options (act 2)', () => {
  it('defaults: both acts, three hops of three attempts', () => {
    expect(parseDemoArgs([])).toEqual({
      quick: false,
      json: false,
      metrics: false,
      help: false,
      acts: [1, 2],
      hops: 3,
      attempts: 3,
    });
  });

  it('--act, --hops and --attempts choose what runs: 3 × 4 reproduces 64, 4 × 4 goes further', () => {
    expect(
      parseDemoArgs(['--act', '2', '--hops', '4', '--attempts', '4', '--quick']),
    ).toMatchObject({ acts: [2], hops: 4, attempts: 4, quick: true });
    expect(parseDemoArgs(['--act', '1', '--json'])).toMatchObject({ acts: [1], json: true });
    expect(chainLimits(3, 4)).toEqual({
      maxDefaultsDown: 1.3,
      minNaiveDown: 48,
      maxHealthy: 1.005,
    });
    expect(chainLimits(3, 3).minNaiveDown).toBe(20);
  });

  it('a value out of range names the option, the value and what it may be', () => {
    expect(() => parseDemoArgs(['--hops', '5'])).toThrow(
      new DemoArgsError('--hops "5": must be one of 3, 4'),
    );
    expect(() => parseDemoArgs(['--attempts', '1'])).toThrow(
      new DemoArgsError('--attempts "1": must be one of 2, 3, 4, 5'),
    );
    expect(() => parseDemoArgs(['--attempts', '3.5'])).toThrow(
      new DemoArgsError('--attempts "3.5": must be one of 2, 3, 4, 5'),
    );
    expect(() => parseDemoArgs(['--act', '3'])).toThrow(
      new DemoArgsError('--act "3": must be one of 1, 2'),
    );
    expect(() => parseDemoArgs(['--act', '1', '--hops', '4'])).toThrow(
      new DemoArgsError('--hops and --attempts set up act 2; they do nothing with --act 1'),
    );
    expect(() => parseDemoArgs(['--act', '2', '--metrics'])).toThrow(DemoArgsError);
    expect(() => parseDemoArgs(['--hops'])).toThrow(DemoArgsError);
    expect(() => parseDemoArgs(['--quik'])).toThrow("Unknown option '--quik'");
  });
});

describe('act 2 scenario', () => {
  it('names the hops frontend first, the data service last', () => {
    expect(hopNames(3)).toEqual(['frontend', 'backend', 'data service']);
    expect(hopNames(4)).toEqual(['frontend', 'backend', 'inventory', 'data service']);
  });

  it('files a moment of the run under its phase', () => {
    expect(chainSeconds(QUICK_CHAIN)).toBe(11);
    expect(
      [0, 1999, 2000, 5999, 6000, 9000, 12_000].map((ms) => phaseIndexAt(QUICK_CHAIN, ms)),
    ).toEqual([0, 0, 1, 1, 2, 3, 3]);
  });
});

const calm: MachineReading = {
  loopDelayP99Ms: 30,
  loopDelayMaxMs: 80,
  cpuPerSecond: 0.4,
  cpuWaitShare: 0.3,
};
const machines = (reading: MachineReading = calm): Record<string, MachineReading> => ({
  'load driver': calm,
  frontend: reading,
  backend: calm,
  'data service': calm,
  database: calm,
});
const phase = (name: string, databasePerCall: number, availability = 1): ChainPhaseSummary => ({
  phase: name,
  calls: 100,
  databasePerCall,
  requestsPerCall: [1, 1, 1, databasePerCall],
  worstSecond: databasePerCall,
  availability,
  p50: 10,
  p99: 40,
  nestedRetries: [0, 100, 100],
  statuses: { '200': 100 },
});
const summary = (
  mode: 'naive' | 'defaults',
  down: number,
  changes: { healthy?: number; availability?: number; machine?: MachineReading } = {},
): ChainSummary => ({
  mode,
  phases: [
    phase('healthy', changes.healthy ?? 1, changes.availability),
    phase('database down', down, 0),
    phase('failing half', 1.3, 0.7),
    phase('healthy again', 1),
  ],
  databasePerSecond: [50, 50, 1350, 1350],
  machines: machines(changes.machine),
});

describe('act 2 verdict', () => {
  const claim = chainLimits(3, 3);

  it('holds when naive retries storm (>= 20 per call), the defaults stay <= 1.3 and healthy phases get 1.00', () => {
    expect(judgeChain(summary('naive', 26.4), summary('defaults', 1.16), claim)).toEqual({
      kind: 'held',
      reasons: [
        "with the database down the library's defaults sent it 1.16 requests per frontend call (at most 1.3)",
        'naive retries sent it 26.40 (at least 20: the storm)',
        'naive retries, healthy: 1.00 database requests per call (1.00)',
        'naive retries, healthy again: 1.00 database requests per call (1.00)',
        'library defaults, healthy: 1.00 database requests per call (1.00)',
        'library defaults, healthy again: 1.00 database requests per call (1.00)',
      ],
    });
  });

  it('is not held when the defaults let through more than 1.3, naive retries do not storm, or a healthy phase retried', () => {
    expect(judgeChain(summary('naive', 26.4), summary('defaults', 1.31), claim)).toMatchObject({
      kind: 'notHeld',
      reasons: [
        "with the database down the library's defaults sent it 1.31 requests per frontend call (at most 1.3)",
      ],
    });
    expect(judgeChain(summary('naive', 12), summary('defaults', 1.1), claim)).toMatchObject({
      kind: 'notHeld',
      reasons: ['naive retries sent it 12.00 (at least 20: the storm)'],
    });
    expect(
      judgeChain(summary('naive', 27), summary('defaults', 1.1, { healthy: 1.02 }), claim),
    ).toMatchObject({
      kind: 'notHeld',
      reasons: ['library defaults, healthy: 1.02 database requests per call (1.00)'],
    });
  });

  it('gives no verdict when a process was starved of CPU, and blames the process when it was not', () => {
    const late: MachineReading = { ...calm, loopDelayP99Ms: 600, cpuWaitShare: 0.9 };
    expect(
      judgeChain(summary('naive', 3), summary('defaults', 2.2, { machine: late }), claim),
    ).toEqual({
      kind: 'machineTooSlow',
      reasons: [
        'library defaults, frontend: the event loop ran 600 ms late (p99; at most 250 ms for the timings to hold); it waited for a CPU 90.0% of the time it was ready to run',
      ],
    });
    const busy: MachineReading = { ...calm, loopDelayP99Ms: 600, cpuWaitShare: 0.1 };
    expect(
      judgeChain(summary('naive', 27), summary('defaults', 1.1, { machine: busy }), claim).kind,
    ).toBe('notHeld');
    // A healthy phase that lost calls: blamed by the busiest process's CPU wait.
    expect(
      judgeChain(summary('naive', 27, { availability: 0.9 }), summary('defaults', 1.1), claim),
    ).toMatchObject({ kind: 'notHeld' });
  });

  it('the demo exits by the worse act', () => {
    expect(worstKind(['held', 'held'])).toBe('held');
    expect(worstKind(['held', 'machineTooSlow'])).toBe('machineTooSlow');
    expect(worstKind(['machineTooSlow', 'notHeld'])).toBe('notHeld');
  });
});

describe('act 2 figures', () => {
  it('files requests by the phase of the call they serve, per call at each hop; worst second per planned call', () => {
    const scenario = {
      ...QUICK_CHAIN,
      phases: [
        { name: 'healthy', database: 'healthy', seconds: 2 },
        { name: 'database down', database: 'down', seconds: 3 },
      ] as const,
    };
    const result = summarizeChain(
      {
        mode: 'naive',
        calls: [
          { sent: 100, succeeded: 100, latencies: [10, 20, 30, 40], statuses: { '200': 100 } },
          { sent: 150, succeeded: 0, latencies: [2000, 3000], statuses: { '502': 150 } },
        ],
        hops: [
          { received: [100, 150], nested: [0, 0] },
          { received: [100, 450], nested: [0, 0] },
          { received: [100, 1350], nested: [0, 0] },
        ],
        database: { received: [100, 4050], perSecond: [50, 50, 1300, 1400, 1350, 20] },
        machines: machines(),
      },
      scenario,
    );
    expect(
      result.phases.map((p) => [
        p.phase,
        p.databasePerCall,
        p.requestsPerCall,
        p.worstSecond,
        p.availability,
        p.p50,
        p.p99,
      ]),
    ).toEqual([
      ['healthy', 1, [1, 1, 1, 1], 1, 1, 20, 40],
      ['database down', 27, [1, 3, 9, 27], 28, 0, 2000, 3000],
    ]);
    // The chart's window is the measured phases' seconds.
    expect(result.databasePerSecond).toEqual([50, 50, 1300, 1400, 1350]);
    const table = chainTable([result], hopNames(3)).split('\n');
    expect(table[0]).toMatch(
      /^configuration\s+phase\s+db req\/call\s+per call: frontend → backend → data service → database/,
    );
    expect(table[3]).toMatch(
      /^naive retries\s+database down\s+27\.00\s+1\.00 → 3\.00 → 9\.00 → 27\.00\s+28\.0\s+0\.0%\s+2000 ms\s+3000 ms\s+- \(no library\)$/,
    );
    expect(quantile([5, 1, 3], 0.5)).toBe(3);
  });

  it('draws one line per configuration and shades the impaired phases', () => {
    const svg = chainChartSvg([summary('naive', 27), summary('defaults', 1.1)], QUICK_CHAIN);
    expect(svg.match(/<polyline data-series="(\w+)"/g)).toEqual([
      '<polyline data-series="naive"',
      '<polyline data-series="defaults"',
    ]);
    expect(svg).toContain('>database down</text>');
    expect(svg).toContain('naive retries (a 3-attempt loop per hop)');
    expect(svg.match(/fill="#f2dede"/g)).toHaveLength(1);
  });
});
