/**
 * The floor under the proxy hop's CPU ratio (bench/proxy-floor.ts): the least a Node process can do
 * for one tools/call, in four forms, each run as its own process so /proc reads its CPU alone.
 *
 *   node floor-servers.mjs echo                         node:http, JSON.parse and an echo answer:
 *                                                       the least a local call costs
 *   node floor-servers.mjs splice HOST PORT             bytes copied between a downstream connection
 *                                                       and its own upstream one, nothing parsed
 *   node floor-servers.mjs http-proxy HOST PORT PATH    node:http parses the request, its body goes
 *                                                       upstream on a pooled keep-alive socket under
 *                                                       a fixed head, the upstream body is the answer:
 *                                                       no JSON, no session, no checks
 *   node floor-servers.mjs mcp-proxy HOST PORT PATH     http-proxy with the request and the answer
 *                                                       parsed and their ids swapped: the least an
 *                                                       MCP-aware proxy does
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

/**
 * One POST to the upstream on a pooled keep-alive socket, under `head` (the request line and the
 * headers before content-length); `onBody` gets the answer's body once all of it has arrived.
 */
const idle = []
function post(head, body, onBody) {
  const socket = idle.pop() ?? connect()
  let got = Buffer.alloc(0)
  const onData = (chunk) => {
    got = got.length === 0 ? chunk : Buffer.concat([got, chunk])
    const end = got.indexOf('\r\n\r\n')
    if (end < 0) return
    const length = /content-length: *(\d+)/i.exec(got.toString('latin1', 0, end))
    if (length === null || got.length < end + 4 + Number(length[1])) return
    socket.off('data', onData)
    idle.push(socket)
    onBody(got.subarray(end + 4))
  }
  socket.on('data', onData)
  socket.write(`${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
}

function connect() {
  const socket = net.connect({ host, port, noDelay: true })
  socket.on('error', () => {})
  // The upstream closes a connection idle longer than its keep-alive timeout.
  socket.on('close', () => idle.includes(socket) && idle.splice(idle.indexOf(socket), 1))
  return socket
}

/** The head of a POST to the upstream for the downstream request `req` (its session and version passed on). */
function upstreamHead(req) {
  return `POST ${path} HTTP/1.1\r\nhost: ${host}:${port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
    `mcp-session-id: ${req.headers['mcp-session-id']}\r\nmcp-protocol-version: ${req.headers['mcp-protocol-version']}\r\n`
}

function httpProxy() {
  return http.createServer((req, res) => {
    const chunks = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)
      post(upstreamHead(req), body, (answer) => {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(answer)
      })
    })
  })
}

/**
 * http-proxy plus the least an MCP-aware proxy does: the request parsed, its session's head looked
 * up, its id replaced by one of the upstream session's own, the answer parsed, its id checked and the
 * client's put back.
 */
function mcpProxy() {
  const heads = new Map()
  let nextId = 1
  return http.createServer((req, res) => {
    let text = ''
    req.setEncoding('utf8').on('data', (chunk) => (text += chunk))
    req.on('end', () => {
      const call = JSON.parse(text)
      const sessionId = req.headers['mcp-session-id']
      let head = heads.get(sessionId)
      if (head === undefined) heads.set(sessionId, (head = upstreamHead(req)))
      const id = nextId++
      post(head, JSON.stringify({ jsonrpc: '2.0', id, method: call.method, params: call.params }), (body) => {
        const answer = JSON.parse(body.toString('utf8'))
        if (answer.id !== id) throw new Error(`the answer to ${id} came with id ${answer.id}`)
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: answer.result }))
      })
    })
  })
}

const server = kind === 'echo' ? echo() : kind === 'splice' ? splice() : kind === 'http-proxy' ? httpProxy() : kind === 'mcp-proxy' ? mcpProxy() : undefined
if (server === undefined) throw new Error(`unknown floor server: ${kind}`)
if (server instanceof http.Server) server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => console.log(`PORT ${server.address().port}`))
