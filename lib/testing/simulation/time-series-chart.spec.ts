import { describe, expect, it } from '@jest/globals';
import { niceAxisMax, renderTimeSeriesChart } from './time-series-chart.js';

describe('renderTimeSeriesChart', () => {
  const chart = {
    title: 'A & B',
    seconds: 4,
    legend: [
      { text: 'a', color: 'red' },
      { text: 'b', color: 'blue' },
    ],
    bands: [
      { from: 1, to: 3, fill: '#eee', label: 'down' },
      { from: 3, to: 4, label: 'back' },
    ],
    panels: [
      {
        max: 10,
        ticks: [{ value: 0, label: '0' }],
        series: [
          { label: 'a', color: 'red', values: [1, 2, null, 4] },
          { label: 'b', color: 'blue', values: [5, 5, 5, 5] },
        ],
        step: true,
        references: [{ value: 5, label: 'rate' }],
      },
    ],
    xLabel: 'seconds',
  };

  it('draws a step line per series (two points a second, null seconds left out), bands in every panel, names and references once', () => {
    const svg = renderTimeSeriesChart(chart);
    const points = [...svg.matchAll(/<polyline data-series="(\w)"[^>]* points="([^"]*)"/g)].map(
      (m) => [m[1], m[2]!.split(' ').length],
    );
    expect(points).toEqual([
      ['a', 6],
      ['b', 8],
    ]);
    expect(svg.match(/fill="#eee"/g)).toHaveLength(1);
    expect(svg).toContain('>down</text>');
    expect(svg).toContain('>back</text>');
    expect(svg).toContain('stroke-dasharray="4 4"');
    expect(svg).toContain('>A &amp; B</text>');
    expect(svg.endsWith('</svg>\n')).toBe(true);
  });

  it('grows with the legend and the panels (960 wide)', () => {
    const one = renderTimeSeriesChart({ ...chart, legend: [chart.legend[0]!] });
    const two = renderTimeSeriesChart({ ...chart, panels: [...chart.panels, ...chart.panels] });
    expect(one).toMatch(/^<svg [^>]*width="960" height="294"/);
    expect(two).toMatch(/^<svg [^>]*width="960" height="508"/);
  });

  it('rounds an axis up to 1, 2, 2.5 or 5 × 10^k', () => {
    expect([0, 0.3, 7, 21, 240, 1300].map(niceAxisMax)).toEqual([1, 0.5, 10, 25, 250, 2000]);
  });
});
