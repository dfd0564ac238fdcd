/**
 * The Redis store, for several gateway hosts behind a load balancer: session records, event logs and
 * the bus live in one Redis (keys and scripts in redis-scripts.ts). Two connections: one for
 * commands, one subscribed to the bus and to invalidations.
 *
 *   get(id) ──► RecordCache ──hit──► record                    (no round trip)
 *                   │ miss
 *                   ▼
 *               EVALSHA get ──► cached until `P i` says the record changed
 *   update/delete ──► script: change + PUBLISH P i "<version> <id>" ──► every worker's cache
 *
 * While Redis is away every operation rejects with StoreUnavailableError within the command timeout
 * (commands never queue), the cache is off (invalidations may be lost), and both connections retry
 * in the background; service resumes when Redis is back. A write answered as failed because Redis
 * did not answer in time is not applied when Redis wakes (its deadline: redis-deadline.ts).
 */
import { MemoryBus } from './memory.ts'
import { ALL_VERSIONS, RecordCache, type LoadedRecord } from './record-cache.ts'
import { decodeLogEntry, decodeRecord, encodeChange, encodeRecord } from './redis-codec.ts'
import { connectRedis, redisConnection, type RedisClient, type RedisEndpoint } from './redis-connection.ts'
import { WriteDeadline } from './redis-deadline.ts'
import { SCRIPTS, type ScriptName } from './redis-scripts.ts'
import type { Bus, BusMessage, DocOwner, DocWrite, SessionChange, SessionRecord, SessionStore, StoredDoc, StoredEvent } from './store.ts'
import { DEFAULT_EVENT_BYTES, eventId, parseEventId, StoreUnavailableError } from './store.ts'
import { RedisTaskTable } from './task-table-redis.ts'
import type { TaskTable } from './task-table.ts'
import { RedisCacheTable } from './cache-table-redis.ts'
import type { CacheTable } from './cache-table.ts'

export interface RedisStoreOptions extends RedisEndpoint {
  /** Prepended to every key and channel, so several gateways (or tests) can share one Redis. */
  keyPrefix: string
  /** Most events kept per session for replay. */
  eventCapacity: number
  /** Seconds an event stays replayable. */
  cacheTtl: number
  /** Most bytes of event data kept per session (its newest event is kept whatever its size); default DEFAULT_EVENT_BYTES. */
  eventBytes?: number
  /** Seconds to wait for a connection. */
  connectTimeout: number
  /** Seconds a command may take before the request that needs it fails with 503. */
  commandTimeout: number
  env?: NodeJS.ProcessEnv
  /** Hears connection trouble (once per outage) and recovery. */
  onStatus?: (event: 'down' | 'up', error?: Error) => void
}

type ScriptCall = (...args: Array<string | number>) => Promise<unknown>

/** The bus over Redis pub/sub: publish goes to Redis, what comes back fans out to local listeners. */
class RedisBus implements Bus {
  readonly #local = new MemoryBus()
  readonly #publish: (channel: string, text: string) => Promise<unknown>

  constructor(publish: (channel: string, text: string) => Promise<unknown>) {
    this.#publish = publish
  }

  async publish(channel: string, message: BusMessage): Promise<void> {
    await this.#publish(channel, JSON.stringify(message))
  }

  subscribe(channel: string, listener: (message: BusMessage) => void): () => void {
    return this.#local.subscribe(channel, listener)
  }

  /** A message that arrived from Redis. */
  deliver(channel: string, text: string): void {
    let message: BusMessage
    try {
      message = JSON.parse(text) as BusMessage
    } catch {
      return
    }
    void this.#local.publish(channel, message)
  }
}

export class RedisStore implements SessionStore {
  readonly bus: RedisBus
  readonly tasks: TaskTable
  readonly cache: CacheTable
  readonly #commands: RedisClient
  readonly #subscriber: RedisClient
  readonly #cache = new RecordCache(false)
  readonly #prefix: string
  readonly #invalidations: string
  readonly #busPattern: string
  readonly #eventCapacity: number
  readonly #eventTtlMs: number
  readonly #eventBytes: number
  readonly #onStatus: NonNullable<RedisStoreOptions['onStatus']>
  /** The deadline each guarded write carries: answered as failed, never applied later. */
  readonly #deadline: WriteDeadline
  #listening = false
  #down = false
  #closed = false
  readonly #connected: Promise<void>
  #resolveConnected: () => void = () => undefined

  constructor(options: RedisStoreOptions) {
    this.#prefix = options.keyPrefix
    this.#invalidations = `${options.keyPrefix}i`
    this.#busPattern = `${options.keyPrefix}b:`
    this.#eventCapacity = options.eventCapacity
    this.#eventTtlMs = Math.ceil(options.cacheTtl * 1000)
    this.#eventBytes = options.eventBytes ?? DEFAULT_EVENT_BYTES
    this.#onStatus = options.onStatus ?? (() => undefined)
    const connection = redisConnection(options, options.connectTimeout, options.commandTimeout, options.env)
    this.#deadline = new WriteDeadline(connection.commandTimeoutMs)
    this.#commands = connectRedis(connection, 'commands')
    for (const [name, script] of Object.entries(SCRIPTS)) this.#commands.defineCommand(name, script)
    this.tasks = new RedisTaskTable(this.#commands, options.keyPrefix, (command) => this.#run(command))
    this.cache = new RedisCacheTable(this.#commands, options.keyPrefix, (command) => this.#run(command))
    this.#subscriber = connectRedis(connection, 'subscriber')
    this.bus = new RedisBus((channel, text) => this.#script('mcpEdgePublish', this.#busPattern + channel, text))

    // Either connection dropping means Redis may be away: stop serving cached records at once, so
    // requests learn it (503) rather than run on records that may have changed meanwhile.
    for (const client of [this.#commands, this.#subscriber]) {
      client.on('error', (error: Error) => this.#trouble(error))
      client.on('close', () => {
        this.#cache.disable()
        this.#trouble()
      })
    }
    this.#commands.on('ready', () => {
      void this.#deadline.learn(this.#commands)
      this.#recovered()
      this.#serve()
    })
    this.#subscriber.on('ready', () => void this.#listen())
    this.#subscriber.on('close', () => {
      this.#listening = false
    })
    this.#subscriber.on('pmessage', (_pattern: string, channel: string, text: string) => {
      this.bus.deliver(channel.slice(this.#busPattern.length), text)
    })
    this.#subscriber.on('message', (_channel: string, text: string) => {
      const space = text.indexOf(' ')
      const version = Number(text.slice(0, space))
      this.#cache.invalidate(text.slice(space + 1), version < 0 ? ALL_VERSIONS : version)
    })
    this.#connected = new Promise((resolve) => (this.#resolveConnected = resolve))
  }

  /** Resolves once both connections are up and the bus listens (tests wait for it; the gateway need not). */
  connected(): Promise<void> {
    return this.#connected
  }

  async create(record: SessionRecord, idleTtlMs: number): Promise<void> {
    const ttl = Math.max(1, Math.round(idleTtlMs))
    const created = await this.#script('mcpEdgeCreate', this.#key('s', record.id), this.#key('e', record.id), this.#key('n', record.id), ttl, encodeRecord(record, ttl), this.#deadline.next())
    if (created !== 1) throw new Error(`session ${record.id} already exists`)
    await this.#script('mcpEdgeIndex', this.#key('r', record.route), record.id, ttl)
    this.#cache.put(record.id, { record, version: 0, idleTtlMs: ttl, expiresInMs: ttl })
  }

  peek(id: string): SessionRecord | undefined {
    return this.#cache.peek(id)
  }

  get(id: string): Promise<SessionRecord | undefined> {
    return this.#cache.get(id, async () => {
      const reply = (await this.#script('mcpEdgeGet', this.#key('s', id))) as [number, string] | null
      return reply === null ? undefined : this.#loaded(id, reply)
    })
  }

  async update(id: string, change: SessionChange): Promise<SessionRecord | undefined> {
    const [kind, value, max] = encodeChange(change)
    const reply = (await this.#script('mcpEdgeUpdate', this.#key('s', id), kind, value, this.#invalidations, id, max, this.#deadline.next())) as [number, string] | null
    if (reply === null) return undefined
    const loaded = this.#loaded(id, reply)
    this.#cache.put(id, loaded)
    return loaded.record
  }

  touch(id: string): void {
    const now = Date.now()
    if (!this.#cache.touchDue(id, now)) return
    // Two steps, since the route's index may live on another cluster node than the session's keys.
    this.#script('mcpEdgeTouch', this.#key('s', id), this.#docKey({ session: id, name: 'catalogue' }), this.#docKey({ session: id, name: 'state' })).then(
      (reply) => {
        if (reply === null) return
        const [ttl, route] = reply as [number, string]
        this.#cache.touched(id, now)
        return this.#script('mcpEdgeIndex', this.#key('r', route), id, ttl)
      },
    ).catch(() => undefined) // Redis is away: the request that touched already failed or will; nothing to add.
  }

  async delete(id: string): Promise<boolean> {
    const docs = [this.#docKey({ session: id, name: 'catalogue' }), this.#docKey({ session: id, name: 'state' })]
    const route = (await this.#script('mcpEdgeDelete', this.#key('s', id), this.#key('e', id), this.#key('n', id), ...docs, this.#invalidations, id, this.#deadline.next())) as string | null
    this.#cache.invalidate(id)
    if (route === null) return false
    await this.#run(() => this.#commands.zrem(this.#key('r', route), id))
    return true
  }

  async count(route: string): Promise<number> {
    return Number(await this.#script('mcpEdgeMembers', this.#key('r', route), 'count'))
  }

  async sessionIds(route: string): Promise<string[]> {
    return (await this.#script('mcpEdgeMembers', this.#key('r', route), 'ids')) as string[]
  }

  async append(sessionId: string, stream: string, data: string): Promise<string> {
    const seq = await this.#script('mcpEdgeAppend', this.#key('s', sessionId), this.#key('e', sessionId), this.#key('n', sessionId), stream, data,
      this.#eventCapacity, this.#eventTtlMs, this.#eventBytes, this.#deadline.next())
    return eventId(stream, Number(seq))
  }

  async replay(sessionId: string, afterId: string): Promise<{ stream: string; events: StoredEvent[] } | undefined> {
    const after = parseEventId(afterId)
    if (after === undefined) return undefined
    const reply = (await this.#script('mcpEdgeReplay', this.#key('s', sessionId), this.#key('e', sessionId))) as [number, number, string[]] | null
    if (reply === null) return undefined
    const [last, now, entries] = reply
    if (after.seq > Number(last)) return undefined
    const events: StoredEvent[] = []
    let known = false
    for (const raw of entries) {
      const entry = decodeLogEntry(raw)
      if (entry === undefined || entry.stream !== after.stream) continue
      if (Number(now) - entry.at > this.#eventTtlMs) continue
      known = true
      if (entry.seq > after.seq) events.push({ id: entry.id, data: entry.data })
    }
    return known ? { stream: after.stream, events } : undefined
  }

  async readDoc(owner: DocOwner): Promise<StoredDoc | undefined> {
    const raw = (await this.#script('mcpEdgeDocRead', this.#docKey(owner))) as string | null
    if (raw === null) return undefined
    const newline = raw.indexOf('\n')
    return { version: Number(raw.slice(0, newline)), value: raw.slice(newline + 1) }
  }

  async writeDoc(owner: DocOwner, expected: number, value: string): Promise<DocWrite> {
    const key = this.#docKey(owner)
    const session = 'session' in owner
    const reply = Number(await this.#script('mcpEdgeDocWrite', key, session ? this.#key('s', owner.session) : key, expected, value, session ? 's' : 'r', this.#deadline.next()))
    return reply > 0 ? { version: reply } : reply === 0 ? 'gone' : 'conflict'
  }

  async ready(): Promise<boolean> {
    if (!this.#listening || this.#commands.status !== 'ready') return false
    return this.#commands.ping().then(() => true, () => false)
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#cache.disable()
    await Promise.allSettled([this.#commands.quit(), this.#subscriber.quit()])
    this.#commands.disconnect()
    this.#subscriber.disconnect()
  }

  /**
   * A session's record and event log carry its id as a hash tag (`{id}`), so they share a Redis Cluster
   * slot and one script may touch both; a route's index is a key of its own.
   */
  #key(kind: 's' | 'e' | 'n' | 'r', name: string): string {
    return kind === 'r' ? `${this.#prefix}r:${name}` : `${this.#prefix}${kind}:{${name}}`
  }

  /** A session's documents share its hash tag (one Cluster slot with its record); a route's is a key of its own. */
  #docKey(owner: DocOwner): string {
    return 'route' in owner ? `${this.#prefix}c:${owner.route}` : `${this.#prefix}d:{${owner.session}}:${owner.name}`
  }

  #loaded(id: string, [pttl, raw]: [number, string]): LoadedRecord {
    const { record, version, idleTtlMs } = decodeRecord(id, raw)
    return { record, version, idleTtlMs, expiresInMs: Number(pttl) }
  }

  #script(name: ScriptName, ...args: Array<string | number>): Promise<unknown> {
    const call = (this.#commands as unknown as Record<ScriptName, ScriptCall>)[name].bind(this.#commands)
    return this.#run(() => call(...args))
  }

  /** Runs a command; any failure to reach Redis becomes StoreUnavailableError. */
  async #run<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command()
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      throw new StoreUnavailableError(`redis: ${reason}`, { cause: error })
    }
  }

  /** Subscribes (again, after a reconnection) and only then serves records from the cache. */
  async #listen(): Promise<void> {
    try {
      await this.#subscriber.psubscribe(`${this.#busPattern}*`)
      await this.#subscriber.subscribe(this.#invalidations)
      this.#listening = true
      this.#serve()
    } catch (error) {
      // The connection dropped while subscribing; the next 'ready' tries again.
      this.#trouble(error as Error)
    }
  }

  /** Once both connections are up (again): the cache may serve, and connected() resolves. */
  #serve(): void {
    if (!this.#listening || this.#commands.status !== 'ready' || this.#closed) return
    this.#cache.enable()
    this.#resolveConnected()
  }

  #trouble(error?: Error): void {
    if (this.#closed || this.#down) return
    this.#down = true
    this.#onStatus('down', error)
  }

  #recovered(): void {
    if (!this.#down || this.#closed) return
    this.#down = false
    this.#onStatus('up')
  }
}
