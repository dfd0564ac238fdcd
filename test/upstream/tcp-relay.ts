// A TCP relay on loopback in front of a server, whose connections a test can cut for real (both
// sockets destroyed, as when a network path fails), to break an upstream's SSE stream or WebSocket.
import net from 'node:net'

interface Teardown { teardown(fn: () => unknown): void }

export interface TcpRelay {
  readonly port: number
  /** Connections accepted so far. */
  readonly accepted: number
  /** Destroys every open connection (both sides); returns how many there were. */
  cut(): number
}

/** Listens on a free loopback port and relays each connection to `targetPort`; closed at teardown. */
export async function tcpRelay(t: Teardown, targetPort: number): Promise<TcpRelay> {
  const open = new Set<{ client: net.Socket; server: net.Socket }>()
  let accepted = 0
  const relay = net.createServer((client) => {
    accepted++
    const server = net.connect(targetPort, '127.0.0.1')
    const pair = { client, server }
    open.add(pair)
    client.pipe(server).pipe(client)
    const end = (): void => {
      open.delete(pair)
      client.destroy()
      server.destroy()
    }
    client.on('error', end).on('close', end)
    server.on('error', end).on('close', end)
  })
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    for (const { client, server } of open) {
      client.destroy()
      server.destroy()
    }
    return new Promise((resolve) => relay.close(resolve))
  })
  return {
    port: (relay.address() as net.AddressInfo).port,
    get accepted() {
      return accepted
    },
    cut() {
      const count = open.size
      for (const { client, server } of [...open]) {
        client.destroy()
        server.destroy()
      }
      open.clear()
      return count
    },
  }
}
