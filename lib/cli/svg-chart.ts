import { BREAKER_STATES, type SimulationReport } from '../testing/simulation/report.js';

/** One run drawn by {@link renderChart}: a label for the legend and its report. */
export interface ChartRun {
  /** Legend text, e.g. `payments` or `payments (budget=none)`. */
  readonly label: string;
  /** The run's report. */
  readonly report: SimulationReport;
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];
const WIDTH = 960;
const LEFT = 78;
const RIGHT = 24;
const PANEL = 150;
const GAP = 46;
const TOP = 74;

function escape(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/** A "nice" upper bound for an axis (1, 2, 2.5, 5 × 10^k) at or above `max`. */
function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

function fmt(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

interface Panel {
  readonly title: string;
  readonly unit: string;
  readonly max: number;
  readonly ticks: readonly { value: number; label: string }[];
  readonly value: (run: ChartRun, second: number) => number | null;
  readonly step: boolean;
}

/**
 * A self-contained SVG chart of one or more runs over time (x axis: seconds of the run), four
 * stacked panels sharing it: dependency requests per second, availability per second (%), breaker
 * state (closed / half-open / open, as a step line), and retry-budget utilization (%). One line per
 * run, colours in legend order; the fault window is shaded. Each series is a `<polyline>` carrying
 * `data-series` (the run's label) and `data-metric`.
 * @param runs at least one run; all are drawn on the longest run's time axis
 * @param title chart title
 */
export function renderChart(runs: readonly ChartRun[], title: string): string {
  const seconds = Math.max(1, ...runs.map((r) => r.report.perSecond.length));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const x = (second: number) => LEFT + (plotWidth * second) / seconds;
  const maxRequests = niceMax(
    Math.max(...runs.flatMap((r) => r.report.perSecond.map((s) => s.dependencyRequests))),
  );
  const hasBreaker = runs.some((r) => r.report.perSecond.some((s) => s.breakerState !== null));
  const hasBudget = runs.some((r) => r.report.perSecond.some((s) => s.budgetUtilization !== null));
  const panels: Panel[] = [
    {
      title: 'Requests reaching the dependency per second',
      unit: 'req/s',
      max: maxRequests,
      ticks: [0, 0.25, 0.5, 0.75, 1].map((f) => ({
        value: f * maxRequests,
        label: fmt(f * maxRequests),
      })),
      value: (run, i) => run.report.perSecond[i]?.dependencyRequests ?? null,
      step: false,
    },
    {
      title: 'Availability per second (calls arriving that second that succeeded)',
      unit: '%',
      max: 100,
      ticks: [0, 25, 50, 75, 100].map((v) => ({ value: v, label: `${v}%` })),
      value: (run, i) =>
        run.report.perSecond[i] === undefined ? null : run.report.perSecond[i]!.availability * 100,
      step: false,
    },
    {
      title: hasBreaker
        ? 'Breaker state (most severe in the second)'
        : 'Breaker state (no breaker in these policies)',
      unit: '',
      max: 2,
      ticks: [
        { value: 0, label: 'closed' },
        { value: 1, label: 'half-open' },
        { value: 2, label: 'open' },
      ],
      value: (run, i) => {
        const state = run.report.perSecond[i]?.breakerState;
        return state === undefined || state === null ? null : BREAKER_STATES.indexOf(state);
      },
      step: true,
    },
    {
      title: hasBudget
        ? 'Retry-budget utilization (end of second)'
        : 'Retry-budget utilization (no budget in these policies)',
      unit: '%',
      max: 100,
      ticks: [0, 50, 100].map((v) => ({ value: v, label: `${v}%` })),
      value: (run, i) => {
        const u = run.report.perSecond[i]?.budgetUtilization;
        return u === undefined || u === null ? null : u * 100;
      },
      step: false,
    },
  ];

  const height = TOP + (runs.length - 1) * 18 + panels.length * (PANEL + GAP) + 24;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="${LEFT}" y="24" font-size="16" font-weight="bold">${escape(title)}</text>`,
  );
  // Legend
  const lx = LEFT;
  runs.forEach((run, index) => {
    const color = COLORS[index % COLORS.length]!;
    const r = run.report;
    const text = `${run.label} — availability ${(r.availability * 100).toFixed(2)}%, load ×${r.loadMultiplier.toFixed(2)}, worst second ×${r.amplification.toFixed(2)}`;
    const ly = 48 + index * 18;
    out.push(
      `<line x1="${lx}" y1="${ly - 4}" x2="${lx + 24}" y2="${ly - 4}" stroke="${color}" stroke-width="3"/>`,
    );
    out.push(
      `<text x="${lx + 32}" y="${ly}" data-legend="${escape(run.label)}">${escape(text)}</text>`,
    );
  });

  const fault = runs[0]!.report.faultWindow;
  panels.forEach((panel, p) => {
    const top = TOP + (runs.length - 1) * 18 + p * (PANEL + GAP) + 20;
    const y = (value: number) => top + PANEL - (PANEL * Math.min(value, panel.max)) / panel.max;
    out.push(`<g data-panel="${p}">`);
    out.push(`<text x="${LEFT}" y="${top - 8}" font-weight="bold">${escape(panel.title)}</text>`);
    if (fault !== undefined) {
      const fx = x(Math.min(seconds, fault.start / 1000));
      const fw = x(Math.min(seconds, fault.end / 1000)) - fx;
      out.push(
        `<rect x="${fx.toFixed(1)}" y="${top}" width="${fw.toFixed(1)}" height="${PANEL}" fill="#f4e3c1" opacity="0.6"/>`,
      );
      if (p === 0)
        out.push(`<text x="${(fx + 4).toFixed(1)}" y="${top + 14}" fill="#8a6d3b">fault</text>`);
    }
    for (const tick of panel.ticks) {
      const ty = y(tick.value).toFixed(1);
      out.push(`<line x1="${LEFT}" y1="${ty}" x2="${WIDTH - RIGHT}" y2="${ty}" stroke="#e3e3e3"/>`);
      out.push(
        `<text x="${LEFT - 6}" y="${(Number(ty) + 4).toFixed(1)}" text-anchor="end" fill="#444">${escape(tick.label)}</text>`,
      );
    }
    out.push(
      `<rect x="${LEFT}" y="${top}" width="${plotWidth}" height="${PANEL}" fill="none" stroke="#888"/>`,
    );
    const tickEvery = niceMax(seconds / 10);
    for (let s = 0; s <= seconds; s += tickEvery) {
      const tx = x(s).toFixed(1);
      out.push(
        `<line x1="${tx}" y1="${top + PANEL}" x2="${tx}" y2="${top + PANEL + 4}" stroke="#888"/>`,
      );
      out.push(
        `<text x="${tx}" y="${top + PANEL + 16}" text-anchor="middle" fill="#444">${s}s</text>`,
      );
    }
    if (panel.unit === 'req/s') {
      out.push(
        `<text transform="translate(16 ${top + PANEL / 2}) rotate(-90)" text-anchor="middle" fill="#444">${panel.unit}</text>`,
      );
    }
    runs.forEach((run, index) => {
      const color = COLORS[index % COLORS.length]!;
      const points: string[] = [];
      for (let i = 0; i < run.report.perSecond.length; i++) {
        const value = panel.value(run, i);
        if (value === null) continue;
        // Offset step lines slightly per run so overlapping states stay visible.
        const vy = y(value) - (panel.step ? index * 3 : 0);
        if (panel.step)
          points.push(
            `${x(i).toFixed(1)},${vy.toFixed(1)}`,
            `${x(i + 1).toFixed(1)},${vy.toFixed(1)}`,
          );
        else points.push(`${x(i + 0.5).toFixed(1)},${vy.toFixed(1)}`);
      }
      if (points.length === 0) return;
      out.push(
        `<polyline data-series="${escape(run.label)}" data-metric="${p}" fill="none" stroke="${color}" stroke-width="${runs.length > 1 ? 1.6 : 1.8}" stroke-linejoin="round" points="${points.join(' ')}"><title>${escape(run.label)}</title></polyline>`,
      );
    });
    out.push('</g>');
  });
  out.push(
    `<text x="${LEFT + plotWidth / 2}" y="${height - 8}" text-anchor="middle" fill="#666">time (seconds of the run; shaded: the dependency's fault window)</text>`,
  );
  out.push('</svg>');
  return out.join('\n') + '\n';
}
