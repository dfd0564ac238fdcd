/**
 * Reads a V8 CPU profile (`node --cpu-prof`) of the gateway under load: self and total time per
 * function, positions mapped back to the TypeScript sources with the source maps servers/probe.mjs
 * saved, grouped into where the time went (gateway code, Fastify, Node core, GC, ...).
 */
import { readFileSync } from 'node:fs'
import { SourceMap, type SourceMapPayload } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ROOT } from './servers.ts'

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
  columnNumber: number
}

interface ProfileNode {
  id: number
  callFrame: CallFrame
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

/** A span of the monotonic clock in µs (process.hrtime, the clock V8 stamps profile samples with). */
export interface Window {
  fromUs: number
  toUs: number
}

/** Now on the monotonic clock, in µs. */
export const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n)

export interface HotFunction {
  name: string
  /** `file:line` of the function, relative to the repository for its own files. */
  location: string
  category: string
  /** Shares of the busy (non-idle) time. */
  selfPct: number
  totalPct: number
}

export interface ProfileSummary {
  /** The scenario that ran while profiling (set by the runner). */
  scenario?: string
  /** True when only the samples of the measured run were counted (not start-up or warm-up). */
  windowed: boolean
  busyMs: number
  /** Busy time by category, largest first. */
  categories: Array<{ category: string; pct: number }>
  /** Functions with the most self time, any category. */
  top: HotFunction[]
  /** The gateway's own functions with the most self time. */
  gateway: HotFunction[]
}

function category(frame: CallFrame): string {
  const { url, functionName } = frame
  if (url === '') {
    if (functionName === '(idle)') return 'idle'
    if (functionName === '(garbage collector)') return 'GC'
    if (functionName === '(program)' || functionName === '(root)') return 'V8 (program)'
    return 'native builtins'
  }
  if (url.startsWith('node:')) return 'Node core'
  const modules = url.lastIndexOf('/node_modules/')
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/')
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!
  }
  if (url.includes('/gateway/')) return 'gateway'
  if (url.includes('/bench/')) return 'bench handler'
  return 'other'
}

/**
 * Summarises a profile; with `window`, only samples taken inside it count (the whole profile when
 * none are, e.g. on a platform whose profiler clock differs from process.hrtime).
 */
export function summariseProfile(profileFile: string, sourceMapsFile: string | undefined, window?: Window, limit = 20): ProfileSummary {
  const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile
  const stamps: number[] = []
  let at = profile.startTime
  for (const delta of profile.timeDeltas) stamps.push((at += delta))
  const inWindow = (i: number): boolean => window === undefined || (stamps[i]! >= window.fromUs && stamps[i]! <= window.toUs)
  const windowed = window !== undefined && stamps.some((_, i) => inWindow(i))
  const payloads = sourceMapsFile === undefined ? {} : (JSON.parse(readFileSync(sourceMapsFile, 'utf8')) as Record<string, SourceMapPayload>)
  const maps = new Map<string, SourceMap>()

  const locate = (frame: CallFrame): string => {
    if (frame.url === '') return ''
    let line = frame.lineNumber + 1
    let url = frame.url
    const payload = payloads[url]
    if (payload !== undefined) {
      let map = maps.get(url)
      if (map === undefined) maps.set(url, (map = new SourceMap(payload)))
      const entry = map.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string; originalLine?: number }
      if (entry.originalLine !== undefined) {
        line = entry.originalLine + 1
        url = entry.originalSource ?? url
      }
    }
    const file = url.startsWith('file:') ? path.relative(ROOT, fileURLToPath(url)) : url
    return `${file}:${line}`
  }

  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const keyOf = (node: ProfileNode): string => {
    const { url, lineNumber, columnNumber, functionName } = node.callFrame
    return `${url}:${lineNumber}:${columnNumber}:${functionName}`
  }

  const self = new Map<string, number>()
  const total = new Map<string, number>()
  const frames = new Map<string, CallFrame>()
  const categories = new Map<string, number>()
  let busy = 0
  for (let i = 0; i < profile.samples.length; i++) {
    if (windowed && !inWindow(i)) continue
    const duration = profile.timeDeltas[i + 1] ?? 0
    const leaf = byId.get(profile.samples[i]!)!
    const leafCategory = category(leaf.callFrame)
    if (leafCategory === 'idle') continue
    busy += duration
    categories.set(leafCategory, (categories.get(leafCategory) ?? 0) + duration)
    const leafKey = keyOf(leaf)
    self.set(leafKey, (self.get(leafKey) ?? 0) + duration)
    const seen = new Set<string>()
    for (let node: ProfileNode | undefined = leaf; node !== undefined; node = byId.get(parent.get(node.id) ?? -1)) {
      const key = keyOf(node)
      frames.set(key, node.callFrame)
      if (seen.has(key)) continue
      seen.add(key)
      total.set(key, (total.get(key) ?? 0) + duration)
    }
  }

  const pct = (us: number): number => Math.round((us / busy) * 1000) / 10
  const hot = (key: string): HotFunction => {
    const frame = frames.get(key)!
    return {
      name: frame.functionName || '(anonymous)',
      location: locate(frame),
      category: category(frame),
      selfPct: pct(self.get(key) ?? 0),
      totalPct: pct(total.get(key) ?? 0),
    }
  }
  const bySelf = [...self.keys()].sort((a, b) => self.get(b)! - self.get(a)!)
  return {
    windowed,
    busyMs: Math.round(busy / 1000),
    categories: [...categories].sort((a, b) => b[1] - a[1]).map(([name, us]) => ({ category: name, pct: pct(us) })),
    top: bySelf.slice(0, limit).map(hot),
    gateway: bySelf.filter((key) => category(frames.get(key)!) === 'gateway').slice(0, limit).map(hot),
  }
}

/** The summary as text for the terminal. */
export function formatProfile(summary: ProfileSummary): string {
  const row = (f: HotFunction): string =>
    `  ${f.selfPct.toFixed(1).padStart(5)}%  ${f.totalPct.toFixed(1).padStart(5)}%  ${f.name.padEnd(32)} ${f.location}${f.category === 'gateway' ? '' : `  [${f.category}]`}`
  return [
    `CPU profile of mcp-edge under load (${summary.scenario ?? 'a scenario'}): ${summary.busyMs} ms busy${summary.windowed ? ' during the measured run' : ' (whole process life)'}`,
    `  where the time went: ${summary.categories.map((c) => `${c.category} ${c.pct}%`).join(', ')}`,
    '  self   total  function                         location',
    '  top functions (any code):',
    ...summary.top.map(row),
    '  gateway functions:',
    ...summary.gateway.map(row),
  ].join('\n')
}
