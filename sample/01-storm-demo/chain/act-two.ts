import { machineLoad } from '../machine.js';
import { type Verdict, verdictText } from '../verdict.js';
import { type ChainScenario, hopNames } from './chain-scenario.js';
import { type ChainSummary, chainTable, summarizeChain } from './chain-summary.js';
import { chainLimits, judgeChain } from './chain-verdict.js';
import { chainChartSvg, writeChainChart } from './chart.js';
import { runChain } from './run-chain.js';

/** What act 2 found: both configurations, the verdict and where the chart went. */
export interface ActTwoOutcome {
  readonly scenario: ChainScenario;
  readonly naive: ChainSummary;
  readonly defaults: ChainSummary;
  readonly verdict: Verdict;
  readonly chart: { readonly svg: string; readonly png: string | undefined };
}

/**
 * Act 2: the chain of `scenario.hops` services in front of a database, first with naive retries at
 * every hop, then with the library's defaults; prints a progress line per phase, the table, where
 * the chart went and the verdict.
 */
export async function actTwo(
  scenario: ChainScenario,
  line: (text: string) => void = (text) => console.log(text),
): Promise<ActTwoOutcome> {
  const names = hopNames(scenario.hops);
  line(
    `act 2: ${[...names, 'database'].join(' → ')}, each service ${scenario.attempts} attempts per call, separate processes on 127.0.0.1; ` +
      `${scenario.rate} calls/s to the frontend; database ${scenario.phases.map((p) => `${p.name} ${p.seconds}s`).join(', ')}`,
  );
  const runs: ChainSummary[] = [];
  for (const mode of ['naive', 'defaults'] as const) {
    const record = await runChain(mode, scenario, (phase) =>
      line(`  ${mode === 'naive' ? 'naive retries' : 'library defaults'}: ${phase}`),
    );
    runs.push(summarizeChain(record, scenario));
  }
  const [naive, defaults] = runs as [ChainSummary, ChainSummary];
  line('');
  line(chainTable(runs, names));
  const chart = await writeChainChart(chainChartSvg(runs, scenario));
  line('');
  line(
    `chart: ${chart.svg}${chart.png === undefined ? ` (no PNG: ${chart.pngProblem})` : ` and ${chart.png}`}`,
  );
  const verdict = judgeChain(naive, defaults, chainLimits(scenario.hops, scenario.attempts));
  line('');
  line(
    verdictText(
      verdict,
      machineLoad(),
      `the storm is real and the library's defaults bound it (act 2)`,
    ),
  );
  return { scenario, naive, defaults, verdict, chart: { svg: chart.svg, png: chart.png } };
}
