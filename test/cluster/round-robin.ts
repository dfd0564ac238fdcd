// A tiny HTTP forwarder standing for a load balancer without sticky sessions: each POST or DELETE goes
// to the next target in turn (GETs, the long-lived streams, take turns of their own so they do not
// shift the order), on a fresh connection (so a node:cluster primary also deals it to its next
// worker). It records which target got which JSON-RPC message.
import { createServer, request as httpRequest, Agent, type IncomingMessage } from 'node:http'

interface Teardown { teardown(fn: () => unknown): void }

export interface Forwarded {
  target: number
  method: string
  /** The parsed JSON body of a POST, if any. */
  body: Record<string, unknown> | undefined
  /** The request's authorization header, if any. */
  authorization?: string | undefined
}

export interface RoundRobin {
  readonly url: string
  readonly log: Forwarded[]
}

export async function roundRobin(t: Teardown, targets: string[]): Promise<RoundRobin> {
  const agent = new Agent({ keepAlive: false })
  const log: Forwarded[] = []
  let next = 0
  let nextGet = 0
  const server = createServer((incoming: IncomingMessage, outgoing) => {
    const target = (incoming.method === 'GET' ? nextGet++ : next++) % targets.length
    const chunks: Buffer[] = []
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
    incoming.on('end', () => {
      const raw = Buffer.concat(chunks)
      let body: Record<string, unknown> | undefined
      try {
        body = raw.length > 0 ? (JSON.parse(raw.toString()) as Record<string, unknown>) : undefined
      } catch {
        body = undefined
      }
      log.push({ target, method: incoming.method!, body, authorization: incoming.headers.authorization })
      const url = new URL(incoming.url!, targets[target])
      const upstream = httpRequest(url, { method: incoming.method, headers: { ...incoming.headers, host: url.host }, agent }, (answer) => {
        outgoing.writeHead(answer.statusCode!, answer.headers)
        // The head at once, as the target sent it: an SSE stream may not send an event for a while.
        outgoing.flushHeaders()
        answer.pipe(outgoing)
      })
      upstream.on('error', () => outgoing.destroy())
      // A client that goes away (a cut SSE stream) cuts the upstream connection too.
      outgoing.on('close', () => upstream.destroy())
      upstream.end(raw)
    })
  })
  // Longer than the client's own idle timeout (undici: 4 s), so the forwarder never closes an idle
  // connection just as the client reuses it (that race is an ECONNRESET, not what these tests test).
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    return new Promise((resolve) => server.close(resolve))
  })
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  return { url: `http://127.0.0.1:${port}`, log }
}
