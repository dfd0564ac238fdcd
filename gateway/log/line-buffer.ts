/**
 * A pino destination that buffers log lines and writes them asynchronously, whole lines at a time,
 * at most PIPE_BUF bytes per write: under the cluster every worker writes to the same stdout, most
 * often a pipe (a container runtime, systemd, a supervisor), and a pipe keeps a write of up to PIPE_BUF
 * bytes in one piece, so lines of different workers never interleave mid-line. (pino's SonicBoom
 * buffer cuts its writes anywhere.)
 *
 *   write(line) ─► current batch (string) ──full──► ready batches ──► one fs.write in flight
 *                  └─ every flush interval, flush(): the current batch is ready too
 *                                                     EAGAIN: retried; EPIPE: logging stops
 *
 * Batches are strings built with `+=` (V8 ropes) and written as strings: no Buffer per write, no array
 * of lines to join, little garbage (a first version with both spent a third of its time in GC).
 *   process exit ─► flushSync (what is still held, written synchronously)
 *
 * Where no other process can cut into a write (a regular file, whose writes the kernel keeps whole, or
 * an output this process alone writes), the batches that gathered while a write was in flight go out
 * together in the next one. One 4 KiB write per event-loop turn is less than a busy gateway logs (at
 * 25,000 requests a second a file fell behind and lines were dropped); joined, the writes keep up.
 */
import fs from 'node:fs'

/** True when `fd` is a pipe or a socket: several processes' writes to it interleave past PIPE_BUF bytes. */
function isStream(fd: number): boolean {
  try {
    const stat = fs.fstatSync(fd)
    return stat.isFIFO() || stat.isSocket() || stat.isCharacterDevice()
  } catch {
    return true
  }
}

/** Bytes a pipe write keeps whole (POSIX guarantees 512; Linux and macOS give 4096). */
export const PIPE_BUF = 4096
/** Delay before a write the pipe refused (EAGAIN: the reader is slow) is tried again. */
const RETRY_MS = 5
/**
 * Full batches held while the write in flight waits (256 × 4 KiB = 1 MiB): past that the reader of
 * the log is not keeping up, and lines are dropped (and counted, in a line written once it catches
 * up) rather than held without bound.
 */
export const MAX_READY = 256

/** Every buffer of this process, written out synchronously when it exits (one listener for all). */
const live = new Set<LineBuffer>()
let exitHooked = false

/** Buffered, line-aligned, asynchronous writes to a file descriptor. */
export class LineBuffer {
  readonly #fd: number
  readonly #limit: number
  /** Whole lines, at most `limit` bytes together (one longer line alone). */
  #current = ''
  #currentBytes = 0
  /** Full batches waiting for the write in flight. */
  #ready: string[] = []
  #writing = false
  #stopped = false
  #droppedBytes = 0
  #waiters: (() => void)[] = []
  readonly #timer: NodeJS.Timeout
  /** True when a write may carry several batches: nobody else's write can land inside it. */
  readonly #joins: boolean

  /**
   * `limit`: bytes gathered before a write (at most PIPE_BUF); `flushMs`: the longest a line waits;
   * `exclusive`: only this process writes to `fd` (a single-process gateway's stdout), so even a pipe
   * may take more than PIPE_BUF bytes in one write.
   */
  constructor(fd: number, limit: number, flushMs: number, exclusive = false) {
    this.#fd = fd
    this.#joins = exclusive || !isStream(fd)
    this.#limit = Math.max(1, Math.min(limit, PIPE_BUF))
    this.#timer = setInterval(() => this.flush(), flushMs)
    this.#timer.unref()
    live.add(this)
    if (!exitHooked) {
      exitHooked = true
      process.once('exit', () => {
        for (const buffer of live) buffer.flushSync()
      })
    }
  }

  /** pino's destination contract: one serialized line, newline included. */
  write(line: string): boolean {
    if (this.#stopped) return true
    const bytes = Buffer.byteLength(line)
    if (this.#currentBytes + bytes > this.#limit && this.#currentBytes > 0) {
      if (this.#ready.length >= MAX_READY) this.#droppedBytes += this.#currentBytes
      else this.#ready.push(this.#current)
      this.#current = line
      this.#currentBytes = bytes
      if (!this.#writing) this.#next()
    } else {
      this.#current += line
      this.#currentBytes += bytes
    }
    return true
  }

  /** Writes out what is held; calls `cb` once every line written so far is written. */
  flush(cb?: (error?: Error) => void): void {
    if (this.#currentBytes > 0) {
      this.#ready.push(this.#current)
      this.#current = ''
      this.#currentBytes = 0
    }
    if (!this.#writing && this.#ready.length === 0) {
      cb?.()
      return
    }
    if (cb !== undefined) this.#waiters.push(cb)
    if (!this.#writing) this.#next()
  }

  /** Writes out what is held and stops the flush timer; later lines are written at exit or by flush(). */
  close(): void {
    clearInterval(this.#timer)
    live.delete(this)
    this.flushSync()
  }

  /**
   * Writes what is held synchronously (at exit, when no event loop is left). A batch already handed
   * to an asynchronous write is that write's: the clean stop awaits `flush` so that none is in flight.
   */
  flushSync(): void {
    clearInterval(this.#timer)
    if (this.#stopped) return
    const batches = this.#ready
    if (this.#currentBytes > 0) batches.push(this.#current)
    this.#ready = []
    this.#current = ''
    this.#currentBytes = 0
    for (const batch of batches) {
      const data = Buffer.from(batch)
      let offset = 0
      while (offset < data.length) {
        try {
          offset += fs.writeSync(this.#fd, data, offset)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return
        }
      }
    }
  }

  #next(): void {
    const ready = this.#ready
    if (ready.length === 0) return
    let batch: string
    if (this.#joins && ready.length > 1) {
      batch = ready.join('')
      this.#ready = []
    } else {
      batch = ready.shift()!
    }
    this.#writing = true
    this.#send(batch)
  }

  #send(data: string | Buffer): void {
    const done = (error: NodeJS.ErrnoException | null, written: number): void => {
      if (error !== null) {
        if (error.code === 'EAGAIN') {
          setTimeout(() => this.#send(data), RETRY_MS).unref()
          return
        }
        // EPIPE (nobody reads the log any more) and the like: logging stops, the gateway goes on.
        this.#stopped = true
        this.#ready = []
        this.#current = ''
        this.#currentBytes = 0
      } else {
        const bytes = typeof data === 'string' ? Buffer.byteLength(data) : data.length
        if (written < bytes) {
          // A short write (a pipe with little room): the rest, as bytes.
          this.#send((typeof data === 'string' ? Buffer.from(data) : data).subarray(written))
          return
        }
      }
      this.#writing = false
      if (this.#droppedBytes > 0 && this.#ready.length < MAX_READY / 2) {
        this.#ready.push(`{"level":40,"time":${Date.now()},"pid":${process.pid},"droppedBytes":${this.#droppedBytes},"msg":"log lines dropped: the log's reader is not keeping up"}\n`)
        this.#droppedBytes = 0
      }
      if (this.#ready.length > 0) {
        this.#next()
        return
      }
      const waiters = this.#waiters
      this.#waiters = []
      for (const waiter of waiters) waiter()
    }
    if (typeof data === 'string') fs.write(this.#fd, data, null, 'utf8', done)
    else fs.write(this.#fd, data, 0, data.length, null, done)
  }
}
