// The shipped deploy/nginx/mcp-edge.conf, run for real by a test: Debian's nginx with that very file,
// only its upstream addresses and listen port swapped for loopback ones. Stopped at teardown.
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { reapOnExit } from '../store/reaper.ts'
import { freePort } from '../fixtures/waiting.ts'

interface Teardown { teardown(fn: () => unknown): void }

/** The nginx binary, or undefined when it is not installed. */
export const nginxBinary = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((file) => spawnSync(file, ['-v']).status === 0)

/** The shipped file's text. */
export const shippedConf = readFileSync(fileURLToPath(new URL('../../deploy/nginx/mcp-edge.conf', import.meta.url)), 'utf8')

/** The shipped file with its two upstream servers made `upstreams` (host:port) and its listen port `port`; nothing else changed. */
export function localised(conf: string, upstreams: readonly [string, string], port: number): string {
  const servers = conf.match(/^\s*server gateway-\d+:8080[^;]*;$/gm) ?? []
  // The file's shape is part of what the tests check: a change that drops a gateway or the port breaks it.
  if (servers.length !== 2) throw new Error(`deploy/nginx/mcp-edge.conf lists ${servers.length} gateways, not 2`)
  let next = 0
  const swapped = conf.replace(/^(\s*)server gateway-\d+:8080([^;]*);$/gm, (_line, indent: string, rest: string) => `${indent}server ${upstreams[next++]}${rest};`)
  if (!/^\s*listen 80;$/m.test(swapped)) throw new Error('deploy/nginx/mcp-edge.conf no longer listens on 80')
  return swapped.replace(/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${port};`)
}

/**
 * Starts nginx with the shipped file in front of `upstreams`; resolves to its URL and port once
 * /healthz answers 200 (or, with `waitForHealth: false`, once nginx answers at all).
 */
export async function startNginx(t: Teardown, upstreams: readonly [string, string], options: { waitForHealth?: boolean } = {}): Promise<{ url: string; port: number }> {
  if (nginxBinary === undefined) throw new Error("nginx is not installed (.ci/run installs Debian's nginx)")
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-nginx-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  const port = await freePort()
  writeFileSync(path.join(folder, 'mcp-edge.conf'), localised(shippedConf, upstreams, port))
  for (const temp of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(path.join(folder, temp))
  writeFileSync(path.join(folder, 'nginx.conf'), `
worker_processes 1;
events { worker_connections 512; }
http {
  access_log ${folder}/access.log;
  client_body_temp_path ${folder}/body;
  proxy_temp_path ${folder}/proxy;
  fastcgi_temp_path ${folder}/fastcgi;
  uwsgi_temp_path ${folder}/uwsgi;
  scgi_temp_path ${folder}/scgi;
  include ${folder}/mcp-edge.conf;
}
`)
  const nginx = spawn(nginxBinary, ['-p', folder, '-c', path.join(folder, 'nginx.conf'), '-g', `daemon off; master_process on; pid ${folder}/nginx.pid; error_log ${folder}/error.log warn;`], { stdio: ['ignore', 'ignore', 'pipe'] })
  reapOnExit(nginx)
  let errors = ''
  nginx.stderr!.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk))
  t.teardown(async () => {
    if (nginx.exitCode !== null) return
    nginx.kill('SIGQUIT')
    await once(nginx, 'exit')
  })
  const url = `http://127.0.0.1:${port}`
  for (let tries = 0; ; tries++) {
    const up = await fetch(`${url}/healthz`).then((answer) => answer.status, () => 0)
    if (up === 200 || (options.waitForHealth === false && up !== 0)) break
    if (tries > 100 || nginx.exitCode !== null) throw new Error(`nginx did not come up: ${errors}`)
    await sleep(50)
  }
  return { url, port }
}
