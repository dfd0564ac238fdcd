// deploy/ read as a platform team reads it: compose.yaml, k8s/mcp-edge.yaml, nginx/mcp-edge.conf and
// the gateway.yaml they mount must agree with each other and with the gateway. A variable the config
// reads must reach the container (compose passed no MCP_EDGE_PUBLIC_HOST, so the public name a user
// set never got into allowed_origins); ports, probe paths and shutdown timings must line up; and
// Prometheus, which scrapes a pod at its IP, must get past /metrics' Host check (it got 403).
import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { fileURLToPath } from 'node:url'
import { load, loadAll } from 'js-yaml'
import t from 'tap'
import { loadConfig } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { fixture, gatewayWith } from '../e2e/harness.ts'

const read = (file: string): string => readFileSync(fileURLToPath(new URL(`../../deploy/${file}`, import.meta.url)), 'utf8')
const gatewayYaml = read('gateway.yaml')
const nginxConf = read('nginx/mcp-edge.conf')

interface ComposeService { environment?: Record<string, string>; ports?: string[]; stop_grace_period?: string; command?: string[]; volumes?: string[] }
const compose = load(read('compose.yaml')) as { services: Record<string, ComposeService> }
interface Container { args: string[]; ports: { containerPort: number }[]; env: { name: string }[]; readinessProbe: { httpGet: { path: string; port: string } }; livenessProbe: { httpGet: { path: string } }; lifecycle: { preStop: { sleep: { seconds: number } } } }
const k8sDocs = loadAll(read('k8s/mcp-edge.yaml')) as { kind: string; spec: Record<string, unknown> }[]
const deployment = k8sDocs.find((doc) => doc.kind === 'Deployment')!
const podSpec = (deployment.spec.template as { spec: { terminationGracePeriodSeconds: number; containers: Container[] } }).spec
const container = podSpec.containers[0]!
const service = k8sDocs.find((doc) => doc.kind === 'Service')!

/** Every `${NAME}` / `${NAME:-default}` the mounted gateway.yaml reads (comments left out). */
const variables = [...new Set([...gatewayYaml.replace(/#.*$/gm, '').matchAll(/\$\{([A-Z0-9_]+)(?::-[^}]*)?\}/g)].map((match) => match[1]!))]
const seconds = (value: string): number => Number(/^(\d+)s$/.exec(value)?.[1] ?? Number.NaN)

t.test('every variable the mounted config reads reaches the gateway containers', async (t) => {
  t.ok(variables.includes('MCP_EDGE_PUBLIC_HOST') && variables.includes('REDIS_URL'), 'found the config’s variables', { variables })
  for (const name of ['gateway-1', 'gateway-2']) {
    const environment = compose.services[name]?.environment ?? {}
    // POD_IP is Kubernetes' (the downward API); its default, loopback, is what compose needs.
    for (const variable of variables.filter((name) => name !== 'POD_IP')) t.ok(variable in environment, `compose ${name} passes ${variable}`)
  }
  const k8sEnv = container.env.map((entry) => entry.name)
  for (const variable of variables.filter((name) => !/\$\{[A-Z0-9_]+:-/.test(gatewayYaml.match(new RegExp(`\\$\\{${name}[^}]*\\}`))?.[0] ?? ''))) {
    t.ok(k8sEnv.includes(variable), `k8s sets ${variable} (it has no default)`)
  }
  t.ok(k8sEnv.includes('MCP_EDGE_PUBLIC_HOST'), 'k8s sets the public name')
  t.ok(k8sEnv.includes('MCP_EDGE_REQUEST_STATE_KEY') && 'MCP_EDGE_REQUEST_STATE_KEY' in (compose.services['gateway-1']?.environment ?? {}), 'both share one request-state key across gateways')
})

t.test('the mounted config loads, and its ports are the ones nginx, compose and k8s use', async (t) => {
  const config = await loadConfig(fileURLToPath(new URL('../../deploy/gateway.yaml', import.meta.url)), { REDIS_URL: 'redis://redis:6379/0', MCP_EDGE_PUBLIC_HOST: 'mcp.example.com:8080' })
  t.equal(config.listen.port, 8080)
  t.equal(config.listen.host, '0.0.0.0', 'every interface, so nginx and the Service reach it')
  t.equal(config.store.type, 'redis', 'a shared store: nginx and the Service are not sticky')
  t.same(config.routes[0]?.allowed_origins, ['mcp.example.com:8080'], 'the public name from the environment')
  const upstreams = [...nginxConf.matchAll(/^\s*server gateway-(\d+):(\d+)/gm)]
  t.same(upstreams.map((match) => `gateway-${match[1]}:${match[2]}`).sort(), Object.keys(compose.services).filter((name) => name.startsWith('gateway-')).map((name) => `${name}:${config.listen.port}`).sort(), 'nginx lists every compose gateway on the config’s port')
  t.match(nginxConf, /^\s*listen 80;$/m)
  t.same(compose.services.nginx?.ports, ['8080:80'], 'compose publishes nginx’s port')
  t.same(container.ports.map((port) => port.containerPort), [config.listen.port], 'the container port is the config’s')
  t.equal((service.spec.ports as { targetPort: string }[])[0]?.targetPort, 'http')
  t.same(container.args, ['start', '--config', '/app/deploy/gateway.yaml'])
  t.same(compose.services['gateway-1']?.command, container.args, 'compose and k8s run the same command')
  t.ok(compose.services['gateway-1']?.volumes?.includes('./gateway.yaml:/app/deploy/gateway.yaml:ro'), 'compose mounts the file where the command reads it')

  t.test('shutdown: the grace periods outlast the drain', async (t) => {
    const preStop = container.lifecycle.preStop.sleep.seconds
    t.ok(podSpec.terminationGracePeriodSeconds > preStop + config.drain_timeout, `k8s: ${podSpec.terminationGracePeriodSeconds} s > ${preStop} s preStop + ${config.drain_timeout} s drain`)
    t.ok(seconds(compose.services['gateway-1']?.stop_grace_period ?? '') > config.drain_timeout, 'compose: stop_grace_period > drain_timeout')
  })
})

t.test('the probe paths k8s and nginx use are served by a gateway, without a session', async (t) => {
  const gateway = await gatewayWith(t, [{ location: '/mcp', handler: fixture('catalog'), server: { name: 'probe', version: '1.0.0' } }])
  for (const probe of [container.readinessProbe.httpGet.path, container.livenessProbe.httpGet.path]) {
    const answer = await fetch(`${gateway.url}${probe}`)
    t.equal(answer.status, 200, `${probe} answers 200`)
    await answer.arrayBuffer()
  }
  t.equal(container.readinessProbe.httpGet.path, '/readyz', 'readiness follows the store (docs/operations.md: /readyz)')
  t.match(nginxConf, /location = \/readyz/)
  t.match(nginxConf, /location = \/healthz/)
})

t.test('Prometheus scraping a pod at its IP reaches /metrics (the k8s example passes POD_IP)', async (t) => {
  const env = container.env as { name: string; valueFrom?: { fieldRef?: { fieldPath?: string } } }[]
  t.equal(env.find((entry) => entry.name === 'POD_IP')?.valueFrom?.fieldRef?.fieldPath, 'status.podIP', 'k8s passes the pod IP (downward API)')
  const config = await loadConfig(fileURLToPath(new URL('../../deploy/gateway.yaml', import.meta.url)), { REDIS_URL: 'redis://redis:6379/0', POD_IP: '10.1.2.3' })
  config.store = { ...config.store, type: 'memory' } as typeof config.store
  config.listen = { host: '127.0.0.1', port: 0 }
  config.log.level = 'silent'
  const gateway = await startGateway(config)
  t.teardown(() => gateway.close())
  const scrape = (host: string): Promise<number> => new Promise((resolve, reject) => {
    const { port } = new URL(gateway.url)
    request({ host: '127.0.0.1', port, path: config.metrics.path, headers: { host } }, (response) => {
      response.resume().on('end', () => resolve(response.statusCode ?? 0))
    }).on('error', reject).end()
  })
  t.equal(await scrape('10.1.2.3:8080'), 200, 'a scrape of the pod at its own IP')
  t.equal(await scrape('10.9.9.9:8080'), 403, 'another address is still refused (DNS rebinding)')
  const pod = (deployment.spec.template as { metadata: { annotations?: Record<string, string> } }).metadata.annotations ?? {}
  t.same([pod['prometheus.io/scrape'], pod['prometheus.io/port'], pod['prometheus.io/path']], ['true', String(container.ports[0]?.containerPort), config.metrics.path], 'the pod says where to scrape')
})
