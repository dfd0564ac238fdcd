// A tiny HTTP forwarder standing for a load balancer without sticky sessions: each POST or DELETE goes
// to the next target in turn (GETs, the long-lived streams, take turns of their own so they do not
// shift the order), on a fresh connection (so a node:cluster primary also deals it to its next
// worker), or, for targets that are single processes, on kept-alive ones (`keepAlive`). It records
// which target got which JSON-RPC message.
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

export interface RoundRobinOptions {
  /**
   * Reuse connections to the targets. Only where no target is a node:cluster primary, which deals
   * connections, not requests, to its workers. A fresh connection per request was a third of the
   * test process's CPU under proxy-chaos.ts's 200 calls a second (connect, close, destroy). The
   * targets must keep an idle connection longer than the calls' gaps (a gateway: 75 s).
   */
  keepAlive?: boolean
}

export async function roundRobin(t: Teardown, targets: string[], options: RoundRobinOptions = {}): Promise<RoundRobin> {
  const agent = new Agent({ keepAlive: options.keepAlive === true })
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
    agent.destroy()
    server.closeAllConnections()
    return new Promise((resolve) => server.close(resolve))
  })
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  return { url: `http://127.0.0.1:${port}`, log }
}
