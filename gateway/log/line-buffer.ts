/**
 * A pino destination that buffers log lines and writes them in batches of whole lines: to a pipe or a
 * socket asynchronously, to a regular file synchronously (below).
 * Under the cluster every worker writes to the same stdout, most often a pipe (a container runtime,
 * systemd, a supervisor), and a pipe keeps a write of up to PIPE_BUF bytes in one piece: there,
 * batches are at most PIPE_BUF bytes, so lines of different workers never interleave mid-line.
 * (pino's SonicBoom buffer cuts its writes anywhere.)
 *
 *   write(line) ─► current batch (bytes) ──full──► a regular file: fs.writeSync at once
 *                  │                          └──► a pipe: ready batches ──► one fs.write(v) in flight
 *                  └─ every flush interval, flush(): the current batch goes too
 *                                                     EAGAIN: retried; EPIPE: logging stops
 *   process exit ─► flushSync (what is still held, written synchronously)
 *
 * Each line is encoded into the batch's bytes as it comes (one pass over it) and becomes garbage at
 * once, or is written there in place by its maker (`reserve`, the access line: no string at all);
 * batches are reused once written. (Batches kept as strings built with `+=` held every line's
 * rope until the write, measured its length in a second pass and encoded it in a third; a first
 * version with an array of lines per batch spent a third of its time in GC.)
 *
 * Where no other process can cut into a write (a regular file, whose writes the kernel keeps whole, or
 * an output this process alone writes), batches are as large as `log.buffer` says (32 KiB by default,
 * nginx's `buffer=32k`), and the batches that gathered while a write was in flight go out together in
 * the next one: one 4 KiB write per event-loop turn is less than a busy gateway logs (at 25,000
 * requests a second a file fell behind and lines were dropped).
 *
 * A regular file is written synchronously, one write per full batch, as nginx writes its buffered
 * access log: copying 32 KiB into the page cache takes microseconds, while the same write through
 * libuv's thread pool cost the event loop about 160 µs of CPU each (waking a pool thread and being
 * woken back, measured with the gateway on one core: 1.6 µs of a tools/call's ~40). A pipe or a
 * socket is written asynchronously, because its reader may stop and a blocking write would stop the
 * gateway with it.
 */
import fs from 'node:fs'

/** What `fd` is: a regular file (written synchronously), a stream (pipe, socket, terminal), or unknown. */
function kindOf(fd: number): 'file' | 'stream' | 'other' {
  try {
    const stat = fs.fstatSync(fd)
    if (stat.isFile()) return 'file'
    return stat.isFIFO() || stat.isSocket() || stat.isCharacterDevice() ? 'stream' : 'other'
  } catch {
    return 'stream'
  }
}

/** Bytes a pipe write keeps whole (POSIX guarantees 512; Linux and macOS give 4096). */
export const PIPE_BUF = 4096
/** Delay before a write the pipe refused (EAGAIN: the reader is slow) is tried again. */
const RETRY_MS = 5
/**
 * Bytes of full batches held while the write in flight waits: past that the reader of the log is not
 * keeping up, and lines are dropped (and counted, in a line written once it catches up) rather than
 * held without bound. MAX_READY: the same in 4 KiB batches.
 */
export const MAX_READY_BYTES = 1024 * 1024
export const MAX_READY = MAX_READY_BYTES / PIPE_BUF
/** The largest batch (`log.buffer`'s maximum): where writes may be joined, larger batches mean fewer writes. */
export const MAX_BATCH = 64 * 1024

/** Every buffer of this process, written out synchronously when it exits (one listener for all). */
const live = new Set<LineBuffer>()
let exitHooked = false

/** Written batches kept for reuse: enough for the batches of a busy turn without holding memory idle. */
const SPARE_BATCHES = 8

/** Buffered, line-aligned, asynchronous writes to a file descriptor. */
export class LineBuffer {
  readonly #fd: number
  readonly #limit: number
  /** Full batches held at most (MAX_READY_BYTES of them). */
  readonly #maxReady: number
  /** The batch being filled: whole lines, at most `limit` bytes (a longer line goes alone). */
  #batch: Buffer
  #used = 0
  /** Full batches waiting for the write in flight (views of batch buffers, or one long line's bytes). */
  #ready: Buffer[] = []
  /** Batch buffers whose write is done, for reuse. */
  #spare: Buffer[] = []
  #writing = false
  /** Batches a full pipe refused (EAGAIN), waiting for their retry: still this buffer's to write at exit. */
  #retrying: { batches: Buffer[]; timer: NodeJS.Timeout } | undefined
  #stopped = false
  #droppedBytes = 0
  #waiters: (() => void)[] = []
  readonly #timer: NodeJS.Timeout
  /** True when a write may carry several batches: nobody else's write can land inside it. */
  readonly #joins: boolean
  /** True for a regular file: each full batch is written at once, synchronously (see above). */
  readonly #direct: boolean

  /**
   * `limit`: bytes gathered before a write (at most MAX_BATCH, and PIPE_BUF where other processes'
   * writes may land between ours); `flushMs`: the longest a line waits; `exclusive`: only this process
   * writes to `fd` (a single-process gateway's stdout), so even a pipe may take more than PIPE_BUF
   * bytes in one write.
   */
  constructor(fd: number, limit: number, flushMs: number, exclusive = false) {
    this.#fd = fd
    const kind = kindOf(fd)
    this.#direct = kind === 'file'
    this.#joins = exclusive || kind !== 'stream'
    this.#limit = Math.max(1, Math.min(limit, this.#joins ? MAX_BATCH : PIPE_BUF))
    this.#maxReady = Math.max(2, Math.floor(MAX_READY_BYTES / this.#limit))
    this.#batch = Buffer.allocUnsafeSlow(this.#limit)
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

  /**
   * True while batches a full pipe refused wait for their retry timer (and no write is in flight):
   * what `flushSync` will write first. A write in flight is the thread pool's until it returns.
   */
  get awaitingRetry(): boolean {
    return this.#retrying !== undefined
  }

  /** pino's destination contract: one serialized line, newline included. */
  write(line: string): boolean {
    if (this.#stopped) return true
    // A UTF-16 unit is at most 3 bytes of UTF-8: with that much room the line fits, unmeasured.
    if (line.length * 3 > this.#limit - this.#used) {
      const bytes = Buffer.byteLength(line)
      if (this.#used + bytes > this.#limit) {
        if (this.#used > 0) this.#seal()
        if (bytes > this.#limit) {
          this.#enqueue(Buffer.from(line))
          return true
        }
      }
    }
    this.#used += this.#batch.write(line, this.#used)
    return true
  }

  /**
   * The batch to write a line of at most `most` bytes into in place, starting at `used`; `commit`
   * then says where it ended. The access line is put together there byte by byte, with no string
   * and no copy of one (a string's write flattens it and copies it through Buffer's C++ binding).
   * Undefined when logging stopped or such a line could not fit even an empty batch: write a string.
   */
  reserve(most: number): Buffer | undefined {
    if (this.#stopped || most > this.#limit) return undefined
    if (most > this.#limit - this.#used) this.#seal()
    return this.#batch
  }

  /** Bytes of the current batch in use: where a line written in place (`reserve`) starts. */
  get used(): number {
    return this.#used
  }

  /** After `reserve`: the line written in place ends at `end` (at most `used` + the bytes reserved). */
  commit(end: number): void {
    this.#used = end
  }

  /** Writes out what is held; calls `cb` once every line written so far is written. */
  flush(cb?: (error?: Error) => void): void {
    if (this.#used > 0) this.#seal()
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
   * Writes what is held synchronously (at exit, when no event loop is left), in order: first batches
   * a full pipe refused and whose retry will not come now, then the ready ones, then the current one.
   * A batch already handed to an asynchronous write is that write's: the clean stop awaits `flush`
   * so that none is in flight.
   */
  flushSync(): void {
    clearInterval(this.#timer)
    if (this.#stopped) return
    const batches = this.#ready
    const retrying = this.#retrying
    if (retrying !== undefined) {
      clearTimeout(retrying.timer)
      this.#retrying = undefined
      this.#writing = false
      batches.unshift(...retrying.batches)
    }
    if (this.#used > 0) batches.push(this.#batch.subarray(0, this.#used))
    this.#ready = []
    this.#used = 0
    for (const data of batches) {
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

  /** The batch being filled is full: it joins the ready ones (or is dropped), and a fresh one starts. */
  #seal(): void {
    if (this.#direct && !this.#writing && this.#ready.length === 0) {
      this.#writeNow(this.#batch.subarray(0, this.#used))
      this.#used = 0
      return
    }
    if (this.#ready.length >= this.#maxReady) {
      // The reader is behind: these lines are dropped (counted), and the batch is refilled.
      this.#droppedBytes += this.#used
      this.#used = 0
      return
    }
    this.#ready.push(this.#batch.subarray(0, this.#used))
    this.#batch = this.#spare.pop() ?? Buffer.allocUnsafeSlow(this.#limit)
    this.#used = 0
    if (!this.#writing) this.#next()
  }

  /** A line longer than a batch, alone. */
  #enqueue(data: Buffer): void {
    if (this.#direct && !this.#writing && this.#ready.length === 0) return this.#writeNow(data)
    if (this.#ready.length >= this.#maxReady) this.#droppedBytes += data.length
    else this.#ready.push(data)
    if (!this.#writing) this.#next()
  }

  /** A regular file's batch, written synchronously; a failure (a full disk) stops logging as an asynchronous one does. */
  #writeNow(data: Buffer): void {
    let offset = 0
    try {
      while (offset < data.length) offset += fs.writeSync(this.#fd, data, offset)
    } catch {
      this.#stopped = true
    }
  }

  #next(): void {
    const ready = this.#ready
    if (ready.length === 0) return
    let batches: Buffer[]
    if (this.#joins && ready.length > 1) {
      batches = ready
      this.#ready = []
    } else {
      batches = [ready.shift()!]
    }
    this.#writing = true
    this.#send(batches)
  }

  #send(batches: Buffer[]): void {
    const done = (error: NodeJS.ErrnoException | null, written: number): void => {
      if (error !== null) {
        if (error.code === 'EAGAIN') {
          const timer = setTimeout(() => {
            this.#retrying = undefined
            this.#send(batches)
          }, RETRY_MS).unref()
          this.#retrying = { batches, timer }
          return
        }
        // EPIPE (nobody reads the log any more) and the like: logging stops, the gateway goes on.
        this.#stopped = true
        this.#ready = []
        this.#used = 0
      } else {
        let bytes = 0
        for (const batch of batches) bytes += batch.length
        if (written < bytes) {
          // A short write (a pipe with little room): the rest.
          this.#send([Buffer.concat(batches).subarray(written)])
          return
        }
        this.#recycle(batches)
      }
      this.#writing = false
      if (this.#droppedBytes > 0 && this.#ready.length < this.#maxReady / 2) {
        this.#ready.push(Buffer.from(`{"level":40,"time":${Date.now()},"pid":${process.pid},"droppedBytes":${this.#droppedBytes},"msg":"log lines dropped: the log's reader is not keeping up"}\n`))
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
    if (batches.length === 1) fs.write(this.#fd, batches[0]!, 0, batches[0]!.length, null, done)
    else fs.writev(this.#fd, batches, done)
  }

  /** Keeps written batch buffers (not a long line's own bytes) for the batches to come. */
  #recycle(batches: Buffer[]): void {
    for (const batch of batches) {
      if (this.#spare.length >= SPARE_BATCHES) return
      const whole = batch.buffer
      if (whole.byteLength === this.#limit && batch.byteOffset === 0 && whole !== this.#batch.buffer) this.#spare.push(Buffer.from(whole))
    }
  }
}
