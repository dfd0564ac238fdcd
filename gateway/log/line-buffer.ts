/**
 * A pino destination that buffers log lines and writes them asynchronously, whole lines at a time,
 * at most PIPE_BUF bytes per write: under the cluster every worker writes to the same stdout, most
 * often a pipe (a container runtime, systemd, a supervisor), and a pipe keeps a write of up to PIPE_BUF
 * bytes in one piece, so lines of different workers never interleave mid-line. (pino's SonicBoom
 * buffer cuts its writes anywhere.)
 *
 *   write(line) ─► lines ──(≥ limit bytes, every flush interval, flush())──► one fs.write in flight
 *                                                          └─ EAGAIN: retried; EPIPE: logging stops
 *   process exit ─► flushSync (what is still held, written synchronously)
 */
import fs from 'node:fs'

/** Bytes a pipe write keeps whole (POSIX guarantees 512; Linux and macOS give 4096). */
export const PIPE_BUF = 4096
/** Delay before a write the pipe refused (EAGAIN: the reader is slow) is tried again. */
const RETRY_MS = 5

/** Every buffer of this process, written out synchronously when it exits (one listener for all). */
const live = new Set<LineBuffer>()
let exitHooked = false

/** Buffered, line-aligned, asynchronous writes to a file descriptor. */
export class LineBuffer {
  readonly #fd: number
  readonly #limit: number
  /** Lines not yet handed to a write, from `#head` on (an index, not shift(): no copying per batch). */
  #lines: string[] = []
  #head = 0
  #chars = 0
  #writing = false
  #stopped = false
  #waiters: (() => void)[] = []
  readonly #timer: NodeJS.Timeout

  /** `limit`: bytes gathered before a write (at most PIPE_BUF); `flushMs`: the longest a line waits. */
  constructor(fd: number, limit: number, flushMs: number) {
    this.#fd = fd
    this.#limit = Math.max(1, Math.min(limit, PIPE_BUF))
    this.#timer = setInterval(() => this.#kick(), flushMs)
    this.#timer.unref()
    live.add(this)
    if (!exitHooked) {
      exitHooked = true
      process.once('exit', () => {
        for (const buffer of live) buffer.flushSync()
      })
    }
  }

  /** Writes out what is held and stops the flush timer; later lines are written at exit or by flush(). */
  close(): void {
    clearInterval(this.#timer)
    live.delete(this)
    this.flushSync()
  }

  /** pino's destination contract: one serialized line, newline included. */
  write(line: string): boolean {
    if (this.#stopped) return true
    this.#lines.push(line)
    this.#chars += line.length
    if (!this.#writing && this.#chars >= this.#limit) this.#next()
    return true
  }

  /** Calls `cb` once every line written so far has been written out. */
  flush(cb?: (error?: Error) => void): void {
    if (!this.#writing && this.#chars === 0) {
      cb?.()
      return
    }
    if (cb !== undefined) this.#waiters.push(cb)
    if (!this.#writing) this.#next()
  }

  /** Writes what is held synchronously (at exit, when no event loop is left). */
  flushSync(): void {
    clearInterval(this.#timer)
    while (this.#chars > 0 && !this.#stopped) {
      const data = Buffer.from(this.#take())
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

  #kick(): void {
    if (!this.#writing && this.#chars > 0) this.#next()
  }

  /** Whole lines, up to `limit` characters (one line at least, however long). */
  #take(): string {
    const lines = this.#lines
    let end = this.#head
    let chars = 0
    while (end < lines.length && (end === this.#head || chars + lines[end]!.length <= this.#limit)) chars += lines[end++]!.length
    const text = end === this.#head + 1 ? lines[this.#head]! : lines.slice(this.#head, end).join('')
    this.#chars -= chars
    if (end === lines.length) {
      this.#lines = []
      this.#head = 0
    } else {
      this.#head = end
    }
    return text
  }

  #next(): void {
    this.#writing = true
    let data = Buffer.from(this.#take())
    // Characters are not bytes: a batch of non-ASCII text can pass PIPE_BUF; its lines go one by one.
    if (data.length > PIPE_BUF && data.indexOf(10) < data.length - 1) {
      const cut = data.indexOf(10) + 1
      this.#lines.splice(this.#head, 0, data.subarray(cut).toString())
      this.#chars += data.length - cut
      data = data.subarray(0, cut)
    }
    this.#send(data, 0)
  }

  #send(data: Buffer, offset: number): void {
    fs.write(this.#fd, data, offset, data.length - offset, null, (error, written) => {
      if (error !== null) {
        if (error.code === 'EAGAIN') {
          setTimeout(() => this.#send(data, offset), RETRY_MS).unref()
          return
        }
        // EPIPE (nobody reads the log any more) and the like: logging stops, the gateway goes on.
        this.#stopped = true
        this.#lines = []
        this.#head = 0
        this.#chars = 0
      } else if (offset + written < data.length) {
        this.#send(data, offset + written)
        return
      }
      this.#writing = false
      if (this.#chars >= this.#limit || (this.#chars > 0 && this.#waiters.length > 0)) {
        this.#next()
        return
      }
      if (this.#chars === 0) {
        const waiters = this.#waiters
        this.#waiters = []
        for (const waiter of waiters) waiter()
      }
    })
  }
}
