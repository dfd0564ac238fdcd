/**
 * Fan-out: how long `server.resourceUpdated(uri)` takes to reach every subscribed session.
 *
 *   N sessions: initialize ─► resources/subscribe bench://watched ─► GET (standalone SSE stream open)
 *   trigger session: tools/call touch ─► handler: await server.resourceUpdated(bench://watched)
 *   time = from sending the touch call until the last of the N streams has the notification
 *
 * The clock runs in the runner (one process on the load core reading N sockets), so the figure
 * includes the client's share; it is an end-to-end upper bound of what the gateway takes.
 */
import http from 'node:http'
import { SseParser } from '../gateway/client/sse-parser.ts'
import { McpHttp, pool, PROTOCOL_VERSION } from './mcp-http.ts'
import { startServer } from './servers.ts'

const WATCHED_URI = 'bench://watched'
const NOTIFICATION = '"notifications/resources/updated"'

export interface Fanout {
  sessions: number
  rounds: number
  /** Per round, ms until the last stream had the notification. */
  roundsMs: number[]
  medianMs: number
  maxMs: number
}

/** A session's open GET stream; `seen` counts resources/updated notifications received on it. */
interface Stream {
  seen: number
  onUpdate: () => void
  close(): void
}

function openStream(url: string, sessionId: string, onUpdate: () => void): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const headers = { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL_VERSION }
    const request = http.get(url, { agent: false, headers }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`GET stream: HTTP ${response.statusCode}`))
        response.resume()
        return
      }
      const stream: Stream = { seen: 0, onUpdate, close: () => request.destroy() }
      const parser = new SseParser()
      response.on('error', () => undefined) // the runner destroys the streams at the end
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        for (const { data } of parser.push(chunk)) {
          if (data.includes(NOTIFICATION) && data.includes(WATCHED_URI)) {
            stream.seen++
            stream.onUpdate()
          }
        }
      })
      resolve(stream)
    })
    request.on('error', (error) => {
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(error)
    })
  })
}

export async function measureFanout(sessions: number, rounds: number): Promise<Fanout> {
  // One client opens every session: sessions_per_principal (100 by default) would refuse the rest.
  const server = await startServer({ kind: 'edge', route: { limits: { sessions_per_principal: 0 } } })
  const client = new McpHttp(server.url, 50)
  const streams: Stream[] = []
  try {
    const ids = await pool(sessions, 50, async () => {
      const id = await client.initialize()
      await client.request('resources/subscribe', { uri: WATCHED_URI }, id)
      return id
    })
    let arrived = 0
    let allArrived = (): void => undefined
    const onUpdate = (): void => {
      if (++arrived === sessions) allArrived()
    }
    streams.push(...(await pool(ids.length, 200, (i) => openStream(server.url, ids[i]!, onUpdate))))
    const trigger = await client.initialize()
    // The standalone stream is registered once its response head is out; give the last ones a moment.
    await new Promise((resolve) => setTimeout(resolve, 200))

    const roundsMs: number[] = []
    for (let round = 1; round <= rounds; round++) {
      arrived = 0
      const everyone = new Promise<void>((resolve, reject) => {
        allArrived = resolve
        setTimeout(() => reject(new Error(`fan-out round ${round}: ${arrived} of ${sessions} streams notified after 10 s`)), 10_000).unref()
      })
      const started = performance.now()
      const answer = client.callTool('touch', {}, trigger)
      await everyone
      roundsMs.push(performance.now() - started)
      await answer
      const late = streams.filter((stream) => stream.seen !== round).length
      if (late > 0) throw new Error(`fan-out round ${round}: ${late} streams did not see exactly ${round} notifications`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const sorted = [...roundsMs].sort((a, b) => a - b)
    return { sessions, rounds, roundsMs, medianMs: sorted[Math.floor(sorted.length / 2)]!, maxMs: sorted[sorted.length - 1]! }
  } finally {
    for (const stream of streams) stream.close()
    client.close()
    await server.stop()
  }
}
