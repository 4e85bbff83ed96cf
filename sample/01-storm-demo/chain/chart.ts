import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChainScenario } from './chain-scenario.js';
import type { ChainSummary } from './chain-summary.js';
import { niceAxisMax, renderTimeSeriesChart } from '@nresilience/nestjs/testing';

const COLORS = { naive: '#d62728', defaults: '#1f77b4' } as const;
const FILLS = { down: '#f2dede', failingHalf: '#fcf3e0' } as const;

/**
 * Act 2's chart: database requests per second over the measured window, one step line per
 * configuration (naive red, defaults blue), the impaired phases shaded and every phase named, a
 * dashed line at the frontend's rate (one request per call). Drawn by the library's one chart code
 * (`renderTimeSeriesChart`, as `nresilience simulate --svg`): self-contained SVG, so it renders the
 * same in a browser, on GitHub and through resvg.
 */
export function chainChartSvg(runs: readonly ChainSummary[], scenario: ChainScenario): string {
  const max = niceAxisMax(Math.max(scenario.rate, ...runs.flatMap((r) => r.databasePerSecond)));
  const labels = {
    naive: `naive retries (a ${scenario.attempts}-attempt loop per hop)`,
    defaults: `the library's defaults (${scenario.attempts} attempts per hop)`,
  };
  let start = 0;
  const bands = scenario.phases.map((phase) => ({
    from: start,
    to: (start += phase.seconds),
    label: phase.name,
    fill: phase.database === 'healthy' ? undefined : FILLS[phase.database],
  }));
  return renderTimeSeriesChart({
    title: `Database requests per second: ${scenario.hops} services × ${scenario.attempts} attempts, ${scenario.rate} calls/s to the frontend`,
    seconds: Math.max(1, ...runs.map((r) => r.databasePerSecond.length)),
    legend: runs.map((run) => ({ text: labels[run.mode], color: COLORS[run.mode] })),
    bands,
    panels: [
      {
        yLabel: 'database requests / s',
        max,
        ticks: [0, 1, 2, 3, 4, 5].map((i) => {
          const value = (max * i) / 5;
          return { value, label: Number.isInteger(value) ? String(value) : value.toFixed(1) };
        }),
        series: runs.map((run) => ({
          label: run.mode,
          color: COLORS[run.mode],
          values: run.databasePerSecond,
        })),
        step: true,
        references: [{ value: scenario.rate, label: '1 request per call' }],
      },
    ],
    xLabel:
      'seconds of the measured phases (shaded: the database down, or failing half its requests)',
    panelHeight: 260,
  });
}

/** Where the chart goes: `sample/01-storm-demo/out/` of the checkout (the demo runs from the repository root). */
export const CHART_DIR = join(process.cwd(), 'sample', '01-storm-demo', 'out');

/**
 * Writes `storm-chain.svg` and, through resvg (`@resvg/resvg-js`, a prebuilt renderer: no browser,
 * no canvas), `storm-chain.png` beside it.
 * @returns the paths written, and why the PNG was not when it was not (resvg missing on this platform)
 */
export async function writeChainChart(
  svg: string,
  dir = CHART_DIR,
): Promise<{ svg: string; png: string | undefined; pngProblem?: string }> {
  mkdirSync(dir, { recursive: true });
  const svgPath = join(dir, 'storm-chain.svg');
  writeFileSync(svgPath, svg);
  let Resvg: typeof import('@resvg/resvg-js').Resvg;
  try {
    ({ Resvg } = await import('@resvg/resvg-js'));
  } catch (error) {
    return {
      svg: svgPath,
      png: undefined,
      pngProblem: `@resvg/resvg-js could not be loaded here (${(error as Error).message.split('\n')[0]})`,
    };
  }
  const png = new Resvg(svg, {
    background: '#ffffff',
    fitTo: { mode: 'width', value: 1920 },
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' },
  })
    .render()
    .asPng();
  const pngPath = join(dir, 'storm-chain.png');
  writeFileSync(pngPath, png);
  return { svg: svgPath, png: pngPath };
}
