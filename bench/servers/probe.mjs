// Preloaded (`node --import`) into a server under test, before tsx registers: plain JavaScript for
// that reason. It lets the bench runner look inside the process without changing the gateway:
//   - IPC {cmd: 'measure'}: forces full GCs (needs --expose-gc) and answers process.memoryUsage()
//     with the committed and used bytes of each V8 heap space (old, code, large objects…);
//   - IPC {cmd: 'snapshot', file}: writes a V8 heap snapshot there (to compare object counts);
//   - BENCH_SOURCEMAPS=<file>: at exit, writes the source maps of the gateway's TypeScript modules
//     so the CPU profile (generated code positions) can be read as file:line of the .ts sources.
import cluster from 'node:cluster'
import { readdirSync, writeFileSync } from 'node:fs'
import { findSourceMap } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import v8 from 'node:v8'

// Cluster workers inherit the preload; their IPC channel is the primary's, and must stay referenced
// (a worker waits on it for its listening handle), so the probe stays out of them.
if (process.send !== undefined && cluster.isPrimary) {
  process.on('message', async (message) => {
    if (message?.cmd === 'snapshot') {
      process.send({ reply: message.id, file: v8.writeHeapSnapshot(message.file) })
      return
    }
    if (message?.cmd !== 'measure') return
    for (let i = 0; i < 4; i++) {
      globalThis.gc?.()
      await new Promise((resolve) => setImmediate(resolve))
    }
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((space) => [space.space_name, { size: space.space_size, used: space.space_used_size }]))
    process.send({ reply: message.id, memory: { ...process.memoryUsage(), spaces }, gc: typeof globalThis.gc === 'function' })
  })
  process.channel?.unref()
}

const sourceMapsFile = process.env.BENCH_SOURCEMAPS
if (sourceMapsFile !== undefined) {
  process.on('exit', () => {
    const maps = {}
    for (const dir of (process.env.BENCH_SOURCE_DIRS ?? '').split(path.delimiter).filter(Boolean)) {
      for (const file of readdirSync(dir, { recursive: true })) {
        if (!String(file).endsWith('.ts')) continue
        const url = pathToFileURL(path.join(dir, String(file))).href
        const map = findSourceMap(url)
        if (map !== undefined) maps[url] = map.payload
      }
    }
    writeFileSync(sourceMapsFile, JSON.stringify(maps))
  })
}
