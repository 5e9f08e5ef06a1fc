// The benchmark as a picture: p50 against N on log axes, one panel per
// function, each scenario a colour, the function's line solid and its
// floor's dashed beside it, so the growth and the gap show at a glance.
// Plain SVG, no dependencies; `make bench` writes it next to BENCHMARKS.md.

import type { Measured } from './targets.js';

const PANEL_WIDTH = 330;
const PLOT = { left: 52, right: 12, top: 34, height: 230 };
const LEGEND_LINE = 17;
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf', '#7f7f7f'];

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function decades(min: number, max: number): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) out.push(10 ** e);
  return out;
}

export function chart(results: readonly Measured[]): string {
  const functions = [...new Set(results.map((r) => r.function))];
  const sizes = [...new Set(results.map((r) => r.n))].sort((a, b) => a - b);
  const values = results.flatMap((r) => [r.p50Ms, r.floorP50Ms]).filter((v) => Number.isFinite(v) && v > 0);
  if (functions.length === 0 || values.length === 0) return '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>';
  const yTicks = decades(Math.min(...values), Math.max(...values));
  const yMin = yTicks[0]!;
  const yMax = yTicks[yTicks.length - 1]!;
  const xMin = Math.min(...sizes);
  const xMax = Math.max(...sizes, xMin * 10);
  const plotWidth = PANEL_WIDTH - PLOT.left - PLOT.right;
  const x = (n: number) => PLOT.left + (Math.log10(n / xMin) / Math.log10(xMax / xMin)) * plotWidth;
  const y = (ms: number) => PLOT.top + PLOT.height - (Math.log10(ms / yMin) / Math.log10(yMax / yMin)) * PLOT.height;
  const scenariosOf = (fn: string) => [...new Set(results.filter((r) => r.function === fn).map((r) => r.scenario))];
  const legendRows = Math.max(...functions.map((fn) => scenariosOf(fn).length));
  const height = PLOT.top + PLOT.height + 40 + legendRows * LEGEND_LINE + 26;
  const width = PANEL_WIDTH * functions.length;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
  ];
  functions.forEach((fn, index) => {
    const ox = index * PANEL_WIDTH;
    parts.push(`<g transform="translate(${ox},0)">`);
    parts.push(`<text x="${PLOT.left + plotWidth / 2}" y="18" text-anchor="middle" font-size="13" font-weight="bold">${escape(fn)}</text>`);
    for (const tick of yTicks) {
      const ty = y(tick).toFixed(1);
      parts.push(`<line x1="${PLOT.left}" x2="${PLOT.left + plotWidth}" y1="${ty}" y2="${ty}" stroke="#e5e5e5"/>`);
      parts.push(
        `<text x="${PLOT.left - 6}" y="${ty}" text-anchor="end" dominant-baseline="middle">${tick >= 1 ? tick : tick.toPrecision(1)} ms</text>`,
      );
    }
    for (const n of sizes) {
      const tx = x(n).toFixed(1);
      parts.push(`<line x1="${tx}" x2="${tx}" y1="${PLOT.top}" y2="${PLOT.top + PLOT.height}" stroke="#e5e5e5"/>`);
      parts.push(`<text x="${tx}" y="${PLOT.top + PLOT.height + 14}" text-anchor="middle">${n}</text>`);
    }
    parts.push(
      `<text x="${PLOT.left + plotWidth / 2}" y="${PLOT.top + PLOT.height + 30}" text-anchor="middle">N (InferenceClusters), p50 per call</text>`,
    );
    parts.push(`<rect x="${PLOT.left}" y="${PLOT.top}" width="${plotWidth}" height="${PLOT.height}" fill="none" stroke="#999"/>`);
    scenariosOf(fn).forEach((scenario, si) => {
      const colour = COLOURS[si % COLOURS.length]!;
      const rows = results.filter((r) => r.function === fn && r.scenario === scenario).sort((a, b) => a.n - b.n);
      const line = (pick: (r: Measured) => number) =>
        rows
          .filter((r) => Number.isFinite(pick(r)) && pick(r) > 0)
          .map((r) => `${x(r.n).toFixed(1)},${y(pick(r)).toFixed(1)}`)
          .join(' ');
      parts.push(
        `<polyline points="${line((r) => r.floorP50Ms)}" fill="none" stroke="${colour}" stroke-width="1.5" stroke-dasharray="4 3" opacity="0.8"/>`,
      );
      parts.push(`<polyline points="${line((r) => r.p50Ms)}" fill="none" stroke="${colour}" stroke-width="2"/>`);
      for (const r of rows) {
        if (Number.isFinite(r.p50Ms) && r.p50Ms > 0)
          parts.push(`<circle cx="${x(r.n).toFixed(1)}" cy="${y(r.p50Ms).toFixed(1)}" r="2.5" fill="${colour}"/>`);
      }
      const ly = PLOT.top + PLOT.height + 48 + si * LEGEND_LINE;
      parts.push(`<line x1="${PLOT.left}" x2="${PLOT.left + 22}" y1="${ly}" y2="${ly}" stroke="${colour}" stroke-width="2"/>`);
      parts.push(`<text x="${PLOT.left + 28}" y="${ly}" dominant-baseline="middle">${escape(scenario)}</text>`);
    });
    parts.push('</g>');
  });
  const footY = height - 10;
  parts.push(
    `<text x="12" y="${footY}" fill="#444">Solid: the function (decodes on demand). Dashed, same colour: the floor on the same request (decodes it in full, echoes). Log axes.</text>`,
  );
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
