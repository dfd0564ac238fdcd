/**
 * docs/bench.svg, drawn by hand: one row per scenario, req/s bars on the left (longer is better),
 * p99 bars on the right (shorter is better); baselines grey, the raw Fastify ceiling dark, mcp-edge
 * orange; skipped scenarios listed with their note.
 */
export interface ChartRow {
  label: string
  group: 'baseline' | 'mcp-edge'
  ceiling: boolean
  reqPerSec?: number
  p99Ms?: number
  errors?: number
  skipped?: string
}

const ROW = 26
const TOP = 64
const LABEL_W = 330
const PANEL_W = 280
const P99_X = LABEL_W + PANEL_W + 120
const WIDTH = P99_X + PANEL_W + 110
const COLOURS = { ceiling: '#4a5561', baseline: '#9aa5b1', 'mcp-edge': '#e8743b' }

const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** A round axis maximum at or above `max`: 1, 2 or 5 times a power of ten. */
function niceMax(max: number): number {
  if (max <= 0) return 1
  const power = 10 ** Math.floor(Math.log10(max))
  return ([1, 2, 5, 10].find((step) => step * power >= max) ?? 10) * power
}

function format(value: number, integer: boolean): string {
  if (integer || value >= 1000) return Math.round(value).toLocaleString('en-US')
  return value >= 10 ? value.toFixed(1) : value.toFixed(2)
}

const clip = (text: string, length: number): string => (text.length > length ? `${text.slice(0, length - 1)}…` : text)

function panel(rows: ChartRow[], x0: number, title: string, value: (row: ChartRow) => number | undefined, unit: string, integer: boolean): string[] {
  const max = niceMax(Math.max(0, ...rows.map((row) => value(row) ?? 0)))
  const format_ = (v: number): string => format(v, integer)
  const scale = (v: number): number => (v / max) * PANEL_W
  const bottom = TOP + rows.length * ROW
  const out = [`<text x="${x0}" y="${TOP - 30}" class="title">${escape(title)}</text>`]
  for (let tick = 0; tick <= 4; tick++) {
    const x = x0 + (PANEL_W * tick) / 4
    out.push(`<line x1="${x}" y1="${TOP - 6}" x2="${x}" y2="${bottom}" class="grid"/>`)
    out.push(`<text x="${x}" y="${TOP - 10}" class="tick">${format_((max * tick) / 4)}</text>`)
  }
  rows.forEach((row, i) => {
    const y = TOP + i * ROW
    const v = value(row)
    if (v === undefined) {
      if (x0 === LABEL_W) out.push(`<text x="${x0 + 4}" y="${y + 17}" class="skip">skipped: ${escape(clip(row.skipped ?? 'no data', 100))}</text>`)
      return
    }
    const colour = row.ceiling ? COLOURS.ceiling : COLOURS[row.group]
    out.push(`<rect x="${x0}" y="${y + 5}" width="${Math.max(1, scale(v)).toFixed(1)}" height="${ROW - 10}" fill="${colour}"/>`)
    const errors = row.errors !== undefined && row.errors > 0 ? ` (${row.errors} errors)` : ''
    out.push(`<text x="${(x0 + scale(v) + 4).toFixed(1)}" y="${y + 17}" class="value">${format_(v)}${unit}${errors}</text>`)
  })
  return out
}

function legend(y: number): string[] {
  const entries: Array<[string, string]> = [[COLOURS.ceiling, 'raw Fastify'], [COLOURS.baseline, 'official SDK'], [COLOURS['mcp-edge'], 'mcp-edge']]
  return entries.flatMap(([colour, name], i) => {
    const x = WIDTH - 300 + i * 100
    return [`<rect x="${x}" y="${y - 9}" width="10" height="10" fill="${colour}"/>`, `<text x="${x + 14}" y="${y}" class="caption">${name}</text>`]
  })
}

export function renderChart(rows: ChartRow[], caption: string): string {
  const height = TOP + rows.length * ROW + 40
  const labels = rows.map((row, i) => `<text x="${LABEL_W - 10}" y="${TOP + i * ROW + 17}" class="label">${escape(row.label)}</text>`)
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif" font-size="12">`,
    '<style>',
    '  .title { font-weight: 600; font-size: 13px; fill: #222 }',
    '  .label { text-anchor: end; fill: #222 }',
    '  .tick { text-anchor: middle; fill: #777; font-size: 10px }',
    '  .value { fill: #333; font-size: 11px }',
    '  .skip { fill: #999; font-style: italic; font-size: 11px }',
    '  .grid { stroke: #e3e3e3; stroke-width: 1 }',
    '  .caption { fill: #777; font-size: 10px }',
    '</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    ...labels,
    ...panel(rows, LABEL_W, 'Requests per second (higher is better)', (row) => row.reqPerSec, '', true),
    ...panel(rows, P99_X, 'p99 latency, ms (lower is better)', (row) => row.p99Ms, ' ms', false),
    ...legend(height - 18),
    `<text x="10" y="${height - 14}" class="caption">${escape(caption)}</text>`,
    '</svg>',
    '',
  ].join('\n')
}
