/**
 * `mcp-edge start --config $BENCH_EDGE_CONFIG_FILE`, as gateway/bin.mjs runs it but without tsx's
 * loader (the handler is a bundled .mjs): the `edge-default` row's server for callgrind-proxy.ts, which
 * learns the port from the "mcp-edge listening" line on stdout.
 */
import { main } from '../../gateway/cli.ts'

const code = await main(['start', '--config', process.env.BENCH_EDGE_CONFIG_FILE ?? 'gateway.yaml'])
if (code !== 0) process.exit(code)
