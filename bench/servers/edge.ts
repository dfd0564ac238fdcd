/**
 * mcp-edge as a benchmark server: the config the runner passes in BENCH_EDGE_CONFIG (JSON), validated
 * by configFromObject and served by startGateway, the same path the CLI takes after reading its YAML.
 * PORT overrides `listen.port`; SIGTERM closes the gateway and exits cleanly (so --cpu-prof writes).
 */
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'

const config = configFromObject(JSON.parse(process.env.BENCH_EDGE_CONFIG ?? '{}'), '<bench>')
if (process.env.PORT !== undefined) config.listen.port = Number(process.env.PORT)
const gateway = await startGateway(config)
// Where it listens, for a parent that let it pick its port (callgrind-proxy.ts: a start that takes
// minutes under valgrind leaves a port picked beforehand to any other process on the machine).
process.send?.({ listening: gateway.url })
process.on('SIGTERM', () => {
  gateway.close().then(
    () => process.exit(0),
    () => process.exit(1),
  )
})
