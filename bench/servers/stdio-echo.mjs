// The smallest stdio MCP server for the stdio pool's bench: initialize, ping, and a tools/call that
// answers `echo: <message>` at once, so the bench measures the pool, not the server.
let buffer = ''
const out = (message) => process.stdout.write(JSON.stringify(message) + '\n')
process.stdin.setEncoding('utf8')
process.stdin.on('end', () => process.exit(0))
process.stdin.on('data', (chunk) => {
  buffer += chunk
  let end
  while ((end = buffer.indexOf('\n')) !== -1) {
    const line = buffer.slice(0, end)
    buffer = buffer.slice(end + 1)
    if (line === '') continue
    const { id, method, params } = JSON.parse(line)
    if (id === undefined) continue
    if (method === 'initialize') {
      out({ jsonrpc: '2.0', id, result: { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'stdio-echo', version: '1.0.0' } } })
    } else if (method === 'tools/call') {
      out({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `echo: ${params.arguments.message}` }] } })
    } else {
      out({ jsonrpc: '2.0', id, result: {} })
    }
  }
})
