// The dashboard in headless Chromium (Debian's /usr/bin/chromium driven by playwright-core; no
// browser download): the default config plus an admin listener and a proxy route to an upstream
// gateway this test kills and starts again. Screenshots go to test/admin/screenshots/ (not committed).
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { load as loadYaml } from 'js-yaml'
import { chromium } from 'playwright-core'
import { McpClient } from '../../gateway/client/client.ts'
import { StreamableHttpTransport } from '../../gateway/client/streamable-http.ts'
import { startGatewayProcess } from '../cluster/gateway-process.ts'
import { reapOnExit } from '../store/reaper.ts'
import { freePort } from '../fixtures/waiting.ts'

const CHROMIUM = '/usr/bin/chromium'
const root = fileURLToPath(new URL('../../', import.meta.url))
const bin = path.join(root, 'gateway/bin.mjs')
const shots = fileURLToPath(new URL('./screenshots/', import.meta.url))

/** An upstream gateway (the echo handler) on a fixed port, in a process this test kills and starts again. */
function upstreamOn(port: number, folder: string): () => Promise<ChildProcess> {
  const file = path.join(folder, 'upstream.yaml')
  writeFileSync(file, JSON.stringify({ listen: { host: '127.0.0.1', port }, routes: [{ location: '/echo', handler: path.join(root, 'handlers/echo.ts'), server: { name: 'upstream-echo', version: '1.0.0' } }] }))
  return async () => {
    const child = spawn(process.execPath, [bin, 'start', '--config', file], { stdio: ['ignore', 'pipe', 'inherit'] })
    reapOnExit(child)
    let seen = ''
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the upstream did not start')), 30_000)
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        seen += chunk
        if (seen.includes('mcp-edge listening')) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
    return child
  }
}

async function toolNames(url: string): Promise<string[]> {
  const client = new McpClient(new StreamableHttpTransport({ url, standaloneStream: false }))
  await client.initialize()
  const names: string[] = []
  let cursor: string | undefined
  do {
    const page = await client.request('tools/list', cursor === undefined ? {} : { cursor })
    for (const tool of page.tools as Array<{ name: string }>) names.push(tool.name)
    cursor = page.nextCursor as string | undefined
  } while (cursor !== undefined)
  await client.close()
  return names
}

t.test('the dashboard, in Chromium', { skip: existsSync(CHROMIUM) ? false : `no ${CHROMIUM}` }, async (t) => {
  mkdirSync(shots, { recursive: true })
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-dashboard-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  const upstreamPort = await freePort()
  const startUpstream = upstreamOn(upstreamPort, folder)
  let upstream = await startUpstream()
  t.teardown(() => void upstream.kill('SIGKILL'))

  // The default config as shipped, its paths made absolute, plus the admin listener and one more proxy route.
  const configDir = path.join(root, 'config')
  const shipped = loadYaml(readFileSync(path.join(configDir, 'gateway.yaml'), 'utf8')) as { routes: Array<Record<string, any>> }
  for (const route of shipped.routes) {
    if (typeof route.handler === 'string') route.handler = path.resolve(configDir, route.handler)
    for (const up of route.upstreams ?? []) if (up.command !== undefined) up.cwd = configDir
  }
  shipped.routes.push({ location: '/proxied', upstreams: [{ name: 'echo-up', url: `http://127.0.0.1:${upstreamPort}/echo`, health_interval: 1 }], server: { name: 'proxied', version: '1.0.0' } })
  const { listen: _listen, ...rest } = shipped as Record<string, unknown>
  const gateway = await startGatewayProcess(t, { ...rest, admin: { listen: '127.0.0.1:0' } })
  const admin = String((await gateway.logged((line) => line.msg === 'admin API and dashboard listening')).url)

  const profile = mkdtempSync(path.join(tmpdir(), 'mcp-edge-chromium-'))
  t.teardown(() => rmSync(profile, { recursive: true, force: true }))
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1200, height: 1000 },
  })
  t.teardown(() => browser.close())
  const page = browser.pages()[0] ?? (await browser.newPage())
  const failures: string[] = []
  page.on('pageerror', (error) => failures.push(error.message))
  page.on('requestfailed', (request) => {
    if (!request.url().startsWith(admin)) failures.push(`left the admin origin: ${request.url()}`)
  })
  await page.goto(`${admin}/?interval=500`)

  // Every route, and every tool a client lists on it.
  for (const route of shipped.routes) {
    await page.locator(`tr[data-route="${route.location}"]`).waitFor({ timeout: 15_000 })
    const names = await toolNames(`${gateway.url}${route.location}`)
    t.ok(names.length > 0, `${route.location} has tools`)
    // A proxy route's upstream tools appear once the page has listed them as a client.
    await page.locator(`tr[data-route="${route.location}"] [data-tool="${names[names.length - 1]}"]`).waitFor({ timeout: 20_000 })
    const shown = await page.locator(`tr[data-route="${route.location}"] [data-tool]`).evaluateAll((items) => items.map((item) => item.getAttribute('data-tool')))
    for (const name of names) t.ok(shown.includes(name), `${route.location}: ${name} shown`)
  }
  t.ok((await page.locator('#routes tbody tr').count()) === shipped.routes.length, 'one row per route')
  await page.screenshot({ path: path.join(shots, 'loaded.png'), fullPage: true })

  // A tool's call count follows the calls.
  const client = new McpClient(new StreamableHttpTransport({ url: `${gateway.url}/mcp`, standaloneStream: false }))
  await client.initialize()
  for (let i = 0; i < 3; i++) await client.request('tools/call', { name: 'echo', arguments: { message: `call ${i}` } })
  await client.close()
  const echoCalls = page.locator('tr[data-call="/mcp tools/call echo"] td.calls')
  await t.resolves(echoCalls.filter({ hasText: /^3$/ }).waitFor({ timeout: 15_000 }), 'the echo row counts 3 calls')

  // The upstream goes down when its process dies, and comes back when it starts again.
  const proxied = new McpClient(new StreamableHttpTransport({ url: `${gateway.url}/proxied`, standaloneStream: false }))
  await proxied.initialize()
  await proxied.request('tools/call', { name: 'echo', arguments: { message: 'through' } })
  const row = page.locator('tr[data-upstream="/proxied echo-up"]')
  await t.resolves(page.locator('tr[data-upstream="/proxied echo-up"][data-state="up"]').waitFor({ timeout: 15_000 }), 'up')
  upstream.kill('SIGKILL')
  await once(upstream, 'exit')
  await t.resolves(page.locator('tr[data-upstream="/proxied echo-up"][data-state="down"]').waitFor({ timeout: 20_000 }), 'down once its process is gone')
  t.match(await row.textContent(), /down/)
  await page.screenshot({ path: path.join(shots, 'upstream-down.png'), fullPage: true })
  upstream = await startUpstream()
  await t.resolves(page.locator('tr[data-upstream="/proxied echo-up"][data-state="up"]').waitFor({ timeout: 30_000 }), 'up again once it is back')
  await proxied.close().catch(() => undefined)

  // Try it: the route's tools, a form from echo's inputSchema, and the answer.
  await page.selectOption('#try-route', '/mcp')
  await page.locator('#try-tool option[value="echo"]').waitFor({ state: 'attached', timeout: 15_000 })
  await page.selectOption('#try-tool', 'echo')
  await page.getByLabel(/^message/).fill('hello from chromium')
  // The route's list comes again while a person has typed (a route picked again, a list that was slow):
  // what they typed stays (it was wiped, and the form then refused to submit an empty message).
  const listedAgain = page.waitForResponse((response) => response.url().endsWith('/api/try'))
  await page.dispatchEvent('#try-route', 'change')
  await listedAgain
  await page.waitForTimeout(50)
  t.equal(await page.getByLabel(/^message/).inputValue(), 'hello from chromium', 'what was typed survives the list coming back')
  await page.getByRole('button', { name: 'Call', exact: true }).click()
  await t.resolves(page.locator('#try-result').filter({ hasText: 'hello from chromium' }).waitFor({ timeout: 15_000 }), 'the answer is shown')
  t.match(await page.locator('#try-result').textContent(), /Tool echo: hello from chromium/)
  await t.resolves(echoCalls.filter({ hasText: /^4$/ }).waitFor({ timeout: 15_000 }), 'the try-it call is counted like any client\'s')
  await page.locator('#try-it').screenshot({ path: path.join(shots, 'try-it.png') })
  await page.evaluate(() => window.scrollTo(0, 0))
  await page.screenshot({ path: path.join(shots, 'dashboard.png'), fullPage: false })
  t.same(failures, [], 'no script error, nothing fetched beyond the admin listener')
})
