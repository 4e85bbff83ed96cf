/** One line of a {@link ChartPanel}: a value per second of the run. */
export interface ChartSeries {
  /** Its name, carried as the line's `data-series` and tooltip. */
  readonly label: string;
  /** Stroke colour (any SVG colour). */
  readonly color: string;
  /** One value per second (index = second); `null` leaves that second out. */
  readonly values: readonly (number | null)[];
}

/** A shaded span of the time axis, drawn in every panel (a fault window, a phase). */
export interface ChartBand {
  /** Start, in seconds of the run. */
  readonly from: number;
  /** End, in seconds of the run. */
  readonly to: number;
  /** Fill colour; without one the band is only named, not shaded. */
  readonly fill?: string;
  /** Its name, written at the top of the first panel, centred on the band. */
  readonly label?: string;
}

/** One panel of a {@link TimeSeriesChart}: its own y axis, lines on the chart's shared time axis. */
export interface ChartPanel {
  /** Bold title above the panel. */
  readonly title?: string;
  /** The y axis's caption, written vertically at its left. */
  readonly yLabel?: string;
  /** The y axis's top (values above it are drawn at it). */
  readonly max: number;
  /** Grid lines and their labels. */
  readonly ticks: readonly { readonly value: number; readonly label: string }[];
  /** Its lines, in drawing order. */
  readonly series: readonly ChartSeries[];
  /** True: each second drawn flat across its width (a step line). False (default): a point mid-second. */
  readonly step?: boolean;
  /** With `step`: raise line i by i × 3 px so lines holding the same value do not hide each other. */
  readonly stagger?: boolean;
  /** Dashed horizontal lines at a value, labelled at their right end (a rate to compare with). */
  readonly references?: readonly { readonly value: number; readonly label: string }[];
}

/** What {@link renderTimeSeriesChart} draws. */
export interface TimeSeriesChart {
  /** Bold title at the top. */
  readonly title: string;
  /** Length of the time axis in seconds (at least 1). */
  readonly seconds: number;
  /** One legend row per entry, in order: a colour swatch and its text. */
  readonly legend: readonly { readonly text: string; readonly color: string }[];
  /** Shaded or named spans of the time axis. */
  readonly bands?: readonly ChartBand[];
  /** Panels stacked top to bottom, sharing the time axis. */
  readonly panels: readonly ChartPanel[];
  /** Caption under the chart, about the time axis. */
  readonly xLabel: string;
  /** Height of each panel's plot in px. Default 150. */
  readonly panelHeight?: number;
}

const WIDTH = 960;
const LEFT = 78;
const RIGHT = 24;
const GAP = 46;
const TOP = 74;

function escape(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/**
 * A "nice" axis top (1, 2, 2.5, 5 × 10^k) at or above `max`; 1 for anything not above 0.
 * @param max the largest value to show
 */
export function niceAxisMax(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

/**
 * A self-contained SVG chart (no external fonts, scripts or links: it renders the same in a browser,
 * on GitHub and through a rasteriser such as resvg) of values per second over a run: a title, a
 * legend, then panels stacked on one time axis, each with its grid, bands, reference lines and one
 * `<polyline data-series data-metric>` per series. 960 px wide; the height follows the legend and
 * the panels. The one chart code of the library: `nresilience simulate --svg` and the storm demo's
 * chart are both drawn by it.
 * @param chart what to draw
 * @returns the SVG document, ending with a newline
 */
export function renderTimeSeriesChart(chart: TimeSeriesChart): string {
  const seconds = Math.max(1, chart.seconds);
  const panelHeight = chart.panelHeight ?? 150;
  const plotWidth = WIDTH - LEFT - RIGHT;
  const x = (second: number) => LEFT + (plotWidth * second) / seconds;
  const legendRows = Math.max(1, chart.legend.length);
  const height = TOP + (legendRows - 1) * 18 + chart.panels.length * (panelHeight + GAP) + 24;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="${LEFT}" y="24" font-size="16" font-weight="bold">${escape(chart.title)}</text>`,
  );
  chart.legend.forEach((entry, index) => {
    const ly = 48 + index * 18;
    out.push(
      `<line x1="${LEFT}" y1="${ly - 4}" x2="${LEFT + 24}" y2="${ly - 4}" stroke="${entry.color}" stroke-width="3"/>`,
      `<text x="${LEFT + 32}" y="${ly}" data-legend="${escape(entry.text)}">${escape(entry.text)}</text>`,
    );
  });
  chart.panels.forEach((panel, p) => {
    const top = TOP + (legendRows - 1) * 18 + p * (panelHeight + GAP) + 20;
    const y = (value: number) =>
      top + panelHeight - (panelHeight * Math.min(value, panel.max)) / panel.max;
    out.push(`<g data-panel="${p}">`);
    if (panel.title !== undefined)
      out.push(`<text x="${LEFT}" y="${top - 8}" font-weight="bold">${escape(panel.title)}</text>`);
    for (const band of chart.bands ?? []) {
      const bx = x(Math.min(seconds, band.from));
      const bw = x(Math.min(seconds, band.to)) - bx;
      if (band.fill !== undefined)
        out.push(
          `<rect x="${bx.toFixed(1)}" y="${top}" width="${bw.toFixed(1)}" height="${panelHeight}" fill="${band.fill}" opacity="0.6"/>`,
        );
      if (p === 0 && band.label !== undefined)
        out.push(
          `<text x="${(bx + bw / 2).toFixed(1)}" y="${top + 14}" text-anchor="middle" fill="#6b5a3a">${escape(band.label)}</text>`,
        );
    }
    for (const tick of panel.ticks) {
      const ty = y(tick.value).toFixed(1);
      out.push(
        `<line x1="${LEFT}" y1="${ty}" x2="${WIDTH - RIGHT}" y2="${ty}" stroke="#e3e3e3"/>`,
        `<text x="${LEFT - 6}" y="${(Number(ty) + 4).toFixed(1)}" text-anchor="end" fill="#444">${escape(tick.label)}</text>`,
      );
    }
    out.push(
      `<rect x="${LEFT}" y="${top}" width="${plotWidth}" height="${panelHeight}" fill="none" stroke="#888"/>`,
    );
    const tickEvery = niceAxisMax(seconds / 10);
    for (let s = 0; s <= seconds; s += tickEvery) {
      const tx = x(s).toFixed(1);
      out.push(
        `<line x1="${tx}" y1="${top + panelHeight}" x2="${tx}" y2="${top + panelHeight + 4}" stroke="#888"/>`,
        `<text x="${tx}" y="${top + panelHeight + 16}" text-anchor="middle" fill="#444">${s}s</text>`,
      );
    }
    if (panel.yLabel !== undefined)
      out.push(
        `<text transform="translate(16 ${top + panelHeight / 2}) rotate(-90)" text-anchor="middle" fill="#444">${escape(panel.yLabel)}</text>`,
      );
    for (const reference of panel.references ?? []) {
      const ry = y(reference.value).toFixed(1);
      out.push(
        `<line x1="${LEFT}" y1="${ry}" x2="${WIDTH - RIGHT}" y2="${ry}" stroke="#333" stroke-dasharray="4 4"/>`,
        `<text x="${WIDTH - RIGHT - 4}" y="${(Number(ry) - 5).toFixed(1)}" text-anchor="end" font-size="11" fill="#333">${escape(reference.label)}</text>`,
      );
    }
    panel.series.forEach((series, index) => {
      const points: string[] = [];
      series.values.forEach((value, i) => {
        if (value === null) return;
        const vy = y(value) - (panel.step === true && panel.stagger === true ? index * 3 : 0);
        if (panel.step === true)
          points.push(
            `${x(i).toFixed(1)},${vy.toFixed(1)}`,
            `${x(i + 1).toFixed(1)},${vy.toFixed(1)}`,
          );
        else points.push(`${x(i + 0.5).toFixed(1)},${vy.toFixed(1)}`);
      });
      if (points.length === 0) return;
      out.push(
        `<polyline data-series="${escape(series.label)}" data-metric="${p}" fill="none" stroke="${series.color}" stroke-width="${panel.series.length > 1 ? 1.8 : 2}" stroke-linejoin="round" points="${points.join(' ')}"><title>${escape(series.label)}</title></polyline>`,
      );
    });
    out.push('</g>');
  });
  out.push(
    `<text x="${LEFT + plotWidth / 2}" y="${height - 8}" text-anchor="middle" fill="#666">${escape(chart.xLabel)}</text>`,
    '</svg>',
  );
  return out.join('\n') + '\n';
}
