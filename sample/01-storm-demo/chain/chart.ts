import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChainScenario } from './chain-scenario.js';
import type { ChainSummary } from './chain-summary.js';

const WIDTH = 960;
const HEIGHT = 420;
const LEFT = 80;
const RIGHT = 24;
const TOP = 64;
const BOTTOM = 56;
const COLORS = { naive: '#d62728', defaults: '#1f77b4' } as const;

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A "nice" axis maximum (1, 2, 2.5, 5 × 10^k) at or above `max`. */
function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

/**
 * Act 2's chart: database requests per second over the measured window, one line per configuration
 * (naive red, defaults blue), the phases shaded and named, a dashed line at the frontend's rate (one
 * request per call). Self-contained SVG (no external fonts or links), so it renders the same in a
 * browser, on GitHub and through resvg.
 */
export function chainChartSvg(runs: readonly ChainSummary[], scenario: ChainScenario): string {
  const seconds = Math.max(1, ...runs.map((r) => r.databasePerSecond.length));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const max = niceMax(Math.max(scenario.rate, ...runs.flatMap((r) => r.databasePerSecond)));
  const x = (second: number): number => LEFT + (plotWidth * second) / seconds;
  const y = (value: number): number => TOP + plotHeight - (plotHeight * value) / max;
  const labels = {
    naive: `naive retries (a ${scenario.attempts}-attempt loop per hop)`,
    defaults: `the library's defaults (${scenario.attempts} attempts per hop)`,
  };
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`,
  );
  parts.push(`<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`);
  const title = `Database requests per second: ${scenario.hops} services × ${scenario.attempts} attempts, ${scenario.rate} calls/s to the frontend`;
  parts.push(`<text x="${LEFT}" y="26" font-size="15" font-weight="bold">${escape(title)}</text>`);
  // Phases: shaded when the database is impaired, named at the top of the plot.
  let start = 0;
  for (const phase of scenario.phases) {
    const x0 = x(start);
    const x1 = x(start + phase.seconds);
    if (phase.database !== 'healthy')
      parts.push(
        `<rect x="${x0.toFixed(1)}" y="${TOP}" width="${(x1 - x0).toFixed(1)}" height="${plotHeight}" fill="${phase.database === 'down' ? '#f2dede' : '#fcf3e0'}"/>`,
      );
    parts.push(
      `<text x="${((x0 + x1) / 2).toFixed(1)}" y="${TOP + 16}" font-size="12" text-anchor="middle" fill="#555">${escape(phase.name)}</text>`,
    );
    start += phase.seconds;
  }
  // Axes and grid.
  for (let i = 0; i <= 5; i++) {
    const value = (max * i) / 5;
    parts.push(
      `<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y(value).toFixed(1)}" y2="${y(value).toFixed(1)}" stroke="#e5e5e5"/>`,
    );
    parts.push(
      `<text x="${LEFT - 8}" y="${(y(value) + 4).toFixed(1)}" font-size="12" text-anchor="end">${Number.isInteger(value) ? value : value.toFixed(1)}</text>`,
    );
  }
  for (let s = 0; s <= seconds; s += seconds > 20 ? 5 : 1)
    parts.push(
      `<text x="${x(s).toFixed(1)}" y="${HEIGHT - BOTTOM + 18}" font-size="12" text-anchor="middle">${s}</text>`,
    );
  parts.push(
    `<text x="${LEFT + plotWidth / 2}" y="${HEIGHT - 14}" font-size="12" text-anchor="middle">seconds</text>`,
  );
  parts.push(
    `<text transform="translate(20 ${TOP + plotHeight / 2}) rotate(-90)" font-size="12" text-anchor="middle">database requests / s</text>`,
  );
  parts.push(
    `<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y(scenario.rate).toFixed(1)}" y2="${y(scenario.rate).toFixed(1)}" stroke="#333" stroke-dasharray="4 4"/>`,
  );
  parts.push(
    `<text x="${WIDTH - RIGHT - 4}" y="${(y(scenario.rate) - 5).toFixed(1)}" font-size="11" text-anchor="end" fill="#333">1 request per call</text>`,
  );
  parts.push(
    `<rect x="${LEFT}" y="${TOP}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#999"/>`,
  );
  // One step line per configuration: each second drawn flat across its width.
  for (const run of runs) {
    const points = run.databasePerSecond.flatMap((value, s) => [
      `${x(s).toFixed(1)},${y(value).toFixed(1)}`,
      `${x(s + 1).toFixed(1)},${y(value).toFixed(1)}`,
    ]);
    parts.push(
      `<polyline data-series="${run.mode}" fill="none" stroke="${COLORS[run.mode]}" stroke-width="2.5" points="${points.join(' ')}"/>`,
    );
  }
  runs.forEach((run, i) => {
    const ly = TOP - 14;
    const lx = LEFT + i * 380;
    parts.push(`<rect x="${lx}" y="${ly - 9}" width="18" height="4" fill="${COLORS[run.mode]}"/>`);
    parts.push(
      `<text x="${lx + 24}" y="${ly - 3}" font-size="12">${escape(labels[run.mode])}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n');
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
