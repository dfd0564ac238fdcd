/**
 * The floor under the proxy hop's CPU ratio (bench/proxy-floor.ts): the least a Node process can do
 * for one tools/call, in three forms, each run as its own process so /proc reads its CPU alone.
 *
 *   node floor-servers.mjs echo                         node:http, JSON.parse and an echo answer:
 *                                                       the least a local call costs
 *   node floor-servers.mjs splice HOST PORT             bytes copied between a downstream connection
 *                                                       and its own upstream one, nothing parsed
 *   node floor-servers.mjs http-proxy HOST PORT PATH    node:http parses the request, its body goes
 *                                                       upstream on a pooled keep-alive socket under
 *                                                       a fixed head, the upstream body is the answer:
 *                                                       no JSON, no session, no checks
 *
 * None of them is a server anyone should run: they are measuring sticks. Each prints `PORT n`.
 */
import http from 'node:http'
import net from 'node:net'

const [kind, host, portText, path] = process.argv.slice(2)
const port = Number(portText)

function echo() {
  return http.createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      const call = JSON.parse(body)
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: { content: [{ type: 'text', text: `echo: ${call.params.arguments.message}` }] } }))
    })
  })
}

function splice() {
  return net.createServer({ noDelay: true }, (down) => {
    const up = net.connect({ host, port, noDelay: true })
    down.on('data', (chunk) => up.write(chunk))
    up.on('data', (chunk) => down.write(chunk))
    const end = () => (down.destroy(), up.destroy())
    for (const socket of [down, up]) socket.on('close', end).on('error', end)
  })
}

function httpProxy() {
  const idle = []
  const connect = () => {
    const socket = net.connect({ host, port, noDelay: true })
    socket.on('error', () => {})
    // The upstream closes a connection idle longer than its keep-alive timeout.
    socket.on('close', () => idle.includes(socket) && idle.splice(idle.indexOf(socket), 1))
    return socket
  }
  return http.createServer((req, res) => {
    const chunks = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)
      const socket = idle.pop() ?? connect()
      let got = Buffer.alloc(0)
      const onData = (chunk) => {
        got = got.length === 0 ? chunk : Buffer.concat([got, chunk])
        const end = got.indexOf('\r\n\r\n')
        if (end < 0) return
        const length = /content-length: *(\d+)/i.exec(got.toString('latin1', 0, end))
        if (length === null || got.length < end + 4 + Number(length[1])) return
        socket.off('data', onData)
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(got.subarray(end + 4))
        idle.push(socket)
      }
      socket.on('data', onData)
      socket.write(
        `POST ${path} HTTP/1.1\r\nhost: ${host}:${port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
          `mcp-session-id: ${req.headers['mcp-session-id']}\r\nmcp-protocol-version: ${req.headers['mcp-protocol-version']}\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      )
    })
  })
}

const server = kind === 'echo' ? echo() : kind === 'splice' ? splice() : kind === 'http-proxy' ? httpProxy() : undefined
if (server === undefined) throw new Error(`unknown floor server: ${kind}`)
if (server instanceof http.Server) server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => console.log(`PORT ${server.address().port}`))
