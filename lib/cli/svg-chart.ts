import { BREAKER_STATES, type SimulationReport } from '../testing/simulation/report.js';
import {
  type ChartPanel,
  niceAxisMax,
  renderTimeSeriesChart,
} from '../testing/simulation/time-series-chart.js';

/** One run drawn by {@link renderChart}: a label for the legend and its report. */
export interface ChartRun {
  /** Legend text, e.g. `payments` or `payments (budget=none)`. */
  readonly label: string;
  /** The run's report. */
  readonly report: SimulationReport;
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];

function fmt(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

/**
 * The simulator's chart of one or more runs over time (x axis: seconds of the run), four stacked
 * panels sharing it: dependency requests per second, availability per second (%), breaker state
 * (closed / half-open / open, as a step line), and retry-budget utilization (%). One line per run,
 * colours in legend order; the fault window is shaded. Each series is a `<polyline>` carrying
 * `data-series` (the run's label) and `data-metric` (drawn by `renderTimeSeriesChart`).
 * @param runs at least one run; all are drawn on the longest run's time axis
 * @param title chart title
 */
export function renderChart(runs: readonly ChartRun[], title: string): string {
  const color = (index: number) => COLORS[index % COLORS.length]!;
  const series = (value: (report: SimulationReport, second: number) => number | null) =>
    runs.map((run, index) => ({
      label: run.label,
      color: color(index),
      values: run.report.perSecond.map((_, second) => value(run.report, second)),
    }));
  const maxRequests = niceAxisMax(
    Math.max(...runs.flatMap((r) => r.report.perSecond.map((s) => s.dependencyRequests))),
  );
  const hasBreaker = runs.some((r) => r.report.perSecond.some((s) => s.breakerState !== null));
  const hasBudget = runs.some((r) => r.report.perSecond.some((s) => s.budgetUtilization !== null));
  const panels: ChartPanel[] = [
    {
      title: 'Requests reaching the dependency per second',
      yLabel: 'req/s',
      max: maxRequests,
      ticks: [0, 0.25, 0.5, 0.75, 1].map((f) => ({
        value: f * maxRequests,
        label: fmt(f * maxRequests),
      })),
      series: series((report, i) => report.perSecond[i]!.dependencyRequests),
    },
    {
      title: 'Availability per second (calls arriving that second that succeeded)',
      max: 100,
      ticks: [0, 25, 50, 75, 100].map((v) => ({ value: v, label: `${v}%` })),
      series: series((report, i) => report.perSecond[i]!.availability * 100),
    },
    {
      title: hasBreaker
        ? 'Breaker state (most severe in the second)'
        : 'Breaker state (no breaker in these policies)',
      max: 2,
      ticks: [
        { value: 0, label: 'closed' },
        { value: 1, label: 'half-open' },
        { value: 2, label: 'open' },
      ],
      series: series((report, i) => {
        const state = report.perSecond[i]!.breakerState;
        return state === null ? null : BREAKER_STATES.indexOf(state);
      }),
      step: true,
      stagger: true,
    },
    {
      title: hasBudget
        ? 'Retry-budget utilization (end of second)'
        : 'Retry-budget utilization (no budget in these policies)',
      max: 100,
      ticks: [0, 50, 100].map((v) => ({ value: v, label: `${v}%` })),
      series: series((report, i) => {
        const u = report.perSecond[i]!.budgetUtilization;
        return u === null ? null : u * 100;
      }),
    },
  ];
  const fault = runs[0]!.report.faultWindow;
  return renderTimeSeriesChart({
    title,
    seconds: Math.max(1, ...runs.map((r) => r.report.perSecond.length)),
    legend: runs.map((run, index) => {
      const r = run.report;
      return {
        color: color(index),
        text: `${run.label} — availability ${(r.availability * 100).toFixed(2)}%, load ×${r.loadMultiplier.toFixed(2)}, worst second ×${r.amplification.toFixed(2)}`,
      };
    }),
    bands:
      fault === undefined
        ? []
        : [{ from: fault.start / 1000, to: fault.end / 1000, fill: '#f4e3c1', label: 'fault' }],
    panels,
    xLabel: "time (seconds of the run; shaded: the dependency's fault window)",
  });
}
