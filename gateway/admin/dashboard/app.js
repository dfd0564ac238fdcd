// The mcp-edge dashboard: plain ES modules, uPlot for the charts, everything served by the admin
// listener (no CDN). It polls the admin API and keeps the last minutes of counters in memory; rates
// and quantiles come from the differences between polls.
import uPlot from '/assets/uPlot.esm.js'

const params = new URLSearchParams(location.search)
const INTERVAL_MS = Math.max(250, Number(params.get('interval') ?? 2000))
const HISTORY = Math.ceil((10 * 60 * 1000) / INTERVAL_MS)
const WINDOW = Math.max(2, Math.ceil(60_000 / INTERVAL_MS))

/** Polls: { at, rows: Map<key, {calls, errors, buckets}> }, oldest first. */
const history = []
let buckets = []
let chartKey = ''
let rateChart
let latencyChart
let tools = new Map()

const $ = (selector) => document.querySelector(selector)
const text = (value) => document.createTextNode(value === undefined || value === null ? '' : String(value))

function cell(value, className) {
  const td = document.createElement('td')
  if (value instanceof Node) td.append(value)
  else td.append(text(value))
  if (className) td.className = className
  return td
}

function rowOf(cells, attrs = {}) {
  const tr = document.createElement('tr')
  for (const [name, value] of Object.entries(attrs)) tr.setAttribute(name, value)
  tr.append(...cells)
  return tr
}

async function api(path, init) {
  const response = await fetch(path, init)
  const body = await response.json().catch(() => ({}))
  if (!response.ok) throw new Error(body.error?.message ?? `HTTP ${response.status}`)
  return body
}

const errorCount = (errors) => Object.values(errors).reduce((sum, n) => sum + n, 0)
const keyOf = (row) => `${row.route} ${row.method} ${row.component}`

/** The q-quantile (seconds) of a bucket histogram, interpolated inside its bucket. */
function quantile(counts, q) {
  const total = counts.reduce((sum, n) => sum + n, 0)
  if (total === 0) return undefined
  let rank = q * total
  for (let i = 0; i < counts.length; i++) {
    if (rank <= counts[i]) {
      const low = i === 0 ? 0 : buckets[i - 1]
      const high = i < buckets.length ? buckets[i] : buckets[buckets.length - 1] * 2
      return low + (high - low) * (counts[i] === 0 ? 0 : rank / counts[i])
    }
    rank -= counts[i]
  }
  return buckets[buckets.length - 1]
}

/** The change of `key` (or of every row when key is '') between two polls. */
function delta(older, newer, key) {
  const sum = (poll) => {
    const total = { calls: 0, errors: 0, buckets: new Array(buckets.length + 1).fill(0) }
    for (const [rowKey, row] of poll.rows) {
      if (key !== '' && rowKey !== key) continue
      total.calls += row.calls
      total.errors += row.errors
      row.buckets.forEach((n, i) => (total.buckets[i] += n))
    }
    return total
  }
  const a = sum(older)
  const b = sum(newer)
  return { calls: b.calls - a.calls, errors: b.errors - a.errors, buckets: b.buckets.map((n, i) => n - a.buckets[i]), seconds: (newer.at - older.at) / 1000 }
}

const ms = (seconds) => (seconds === undefined ? '' : (seconds * 1000).toFixed(seconds < 0.01 ? 2 : 1))

function renderOverview(overview) {
  const workers = overview.workers.length
  $('#overview').textContent = `generation ${overview.generations.join(', ')} · config ${overview.digest} · ${workers} worker${workers === 1 ? '' : 's'} · ${overview.sessions} sessions · ${overview.calls} calls · ${overview.errors} errors · ${overview.upstreams.down} of ${overview.upstreams.total} upstreams down`
}

/** A proxy route's tools as a client lists them (its upstreams' and its own), by route: filled through /api/try. */
const listedTools = new Map()
let listedAt = 0

async function listProxyTools(routes) {
  listedAt = Date.now()
  for (const route of routes.filter((route) => route.kind === 'proxy')) {
    const answer = await api('/api/try', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ route: route.location, method: 'tools/list' }) }).catch(() => undefined)
    if (answer !== undefined) listedTools.set(route.location, answer.result.tools)
  }
}

function renderRoutes(routes, sessions) {
  const body = $('#routes tbody')
  body.replaceChildren(...routes.map((route) => {
    const list = document.createElement('ul')
    list.className = 'tools'
    for (const tool of listedTools.get(route.location) ?? route.tools) {
      const item = document.createElement('li')
      item.dataset.tool = tool.name
      item.textContent = tool.name
      if (tool.description) item.title = tool.description
      list.append(item)
    }
    const others = [...route.prompts.map((name) => `prompt ${name}`), ...route.resources, ...route.templates].join(', ')
    return rowOf([cell(route.location), cell(route.kind), cell(sessions[route.location] ?? '', 'num'), cell(list), cell(others), cell(route.upstreams.join(', '))], { 'data-route': route.location })
  }))
}

function renderUpstreams(upstreams) {
  $('#no-upstreams').hidden = upstreams.length > 0
  $('#upstreams tbody').replaceChildren(...upstreams.map((upstream) => {
    const state = document.createElement('span')
    state.className = `state state-${upstream.state}`
    state.textContent = upstream.state
    return rowOf([
      cell(upstream.route), cell(upstream.name), cell(upstream.transport), cell(state), cell(upstream.reason ?? ''), cell(new Date(upstream.since).toLocaleTimeString()),
      cell(upstream.reconnects, 'num'), cell(upstream.children ?? '', 'num'), cell(upstream.restarts ?? '', 'num'), cell(upstream.calls, 'num'), cell(errorCount(upstream.errors), 'num'),
    ], { 'data-upstream': `${upstream.route} ${upstream.name}`, 'data-state': upstream.state })
  }))
}

function renderCalls(calls) {
  const newest = history[history.length - 1]
  const older = history[Math.max(0, history.length - 1 - WINDOW)]
  $('#calls tbody').replaceChildren(...calls.filter((row) => row.component !== '' || row.method !== 'initialize').map((row) => {
    const key = keyOf(row)
    const change = older === newest ? undefined : delta(older, newest, key)
    const button = document.createElement('button')
    button.type = 'button'
    button.textContent = chartKey === key ? 'shown' : 'show'
    button.setAttribute('aria-pressed', String(chartKey === key))
    button.setAttribute('aria-label', `chart ${key}`)
    button.addEventListener('click', () => {
      chartKey = chartKey === key ? '' : key
      $('#chart-target').textContent = chartKey || 'all'
      drawCharts()
      renderCalls(calls)
    })
    return rowOf([
      cell(row.route), cell(row.method), cell(row.component || '—'), cell(row.calls, 'num calls'), cell(errorCount(row.errors), 'num errors'),
      cell(change && change.seconds > 0 ? (change.calls / change.seconds).toFixed(2) : '', 'num'),
      cell(change ? ms(quantile(change.buckets, 0.5)) : '', 'num'), cell(change ? ms(quantile(change.buckets, 0.99)) : '', 'num'), cell(button),
    ], { 'data-call': key })
  }))
}

function renderErrors(errors) {
  $('#errors tbody').replaceChildren(...errors.slice(0, 50).map((error) => rowOf([
    cell(new Date(error.at).toLocaleTimeString()), cell(error.route), cell(error.method), cell(error.component), cell(error.upstream ?? ''), cell(error.error), cell(error.message ?? ''), cell(error.durationMs, 'num'),
  ])))
}

function chartSeries() {
  const times = []
  const rates = []
  const errorRates = []
  const p50 = []
  const p99 = []
  for (let i = 1; i < history.length; i++) {
    const change = delta(history[i - 1], history[i], chartKey)
    times.push(history[i].at / 1000)
    rates.push(change.seconds > 0 ? change.calls / change.seconds : 0)
    errorRates.push(change.seconds > 0 ? change.errors / change.seconds : 0)
    const median = quantile(change.buckets, 0.5)
    const tail = quantile(change.buckets, 0.99)
    p50.push(median === undefined ? null : median * 1000)
    p99.push(tail === undefined ? null : tail * 1000)
  }
  return { rate: [times, rates, errorRates], latency: [times, p50, p99] }
}

function drawCharts() {
  const { rate, latency } = chartSeries()
  const width = Math.min(560, Math.max(280, (document.body.clientWidth - 60) / 2))
  if (rateChart === undefined) {
    rateChart = new uPlot({ width, height: 160, series: [{}, { label: 'calls/s', stroke: '#2f6feb' }, { label: 'errors/s', stroke: '#c62828' }] }, rate, $('#rate-chart'))
    latencyChart = new uPlot({ width, height: 160, series: [{}, { label: 'p50 ms', stroke: '#2e7d32' }, { label: 'p99 ms', stroke: '#ef6c00' }] }, latency, $('#latency-chart'))
  } else {
    rateChart.setData(rate)
    latencyChart.setData(latency)
  }
}

// ---- try it ------------------------------------------------------------------------------------

function fieldFor(name, schema, required) {
  const id = `arg-${name}`
  const label = document.createElement('label')
  label.htmlFor = id
  label.textContent = required ? `${name} (required)` : name
  let input
  if (Array.isArray(schema.enum)) {
    input = document.createElement('select')
    for (const value of schema.enum) input.append(new Option(String(value), JSON.stringify(value)))
    input.dataset.kind = 'json'
  } else if (schema.type === 'boolean') {
    input = document.createElement('input')
    input.type = 'checkbox'
    input.dataset.kind = 'boolean'
  } else if (schema.type === 'number' || schema.type === 'integer') {
    input = document.createElement('input')
    input.type = 'number'
    if (schema.type === 'integer') input.step = '1'
    input.dataset.kind = 'number'
  } else if (schema.type === 'object' || schema.type === 'array') {
    input = document.createElement('textarea')
    input.rows = 3
    input.placeholder = schema.type === 'array' ? '[ ]' : '{ }'
    input.dataset.kind = 'json'
  } else {
    input = document.createElement('input')
    input.type = 'text'
    input.dataset.kind = 'string'
  }
  input.id = id
  input.name = name
  if (required) input.required = true
  if (schema.description) input.title = schema.description
  return [label, input]
}

/** The form for the selected tool; what was typed in a field the new form also has is kept (a list that comes back while a person types must not wipe it). */
function renderForm() {
  const tool = tools.get($('#try-tool').value)
  const fieldset = $('#try-args')
  const typed = fieldset.dataset.tool === $('#try-tool').value ? valuesOf(fieldset) : new Map()
  fieldset.dataset.tool = $('#try-tool').value
  const legend = document.createElement('legend')
  legend.textContent = 'Arguments'
  fieldset.replaceChildren(legend)
  $('#try-description').textContent = tool?.description ?? ''
  const schema = tool?.inputSchema ?? {}
  const required = new Set(schema.required ?? [])
  for (const [name, property] of Object.entries(schema.properties ?? {})) fieldset.append(...fieldFor(name, property ?? {}, required.has(name)))
  for (const input of fieldset.querySelectorAll('input, select, textarea')) {
    if (!typed.has(input.name)) continue
    if (input.type === 'checkbox') input.checked = typed.get(input.name)
    else input.value = typed.get(input.name)
  }
}

function valuesOf(fieldset) {
  const values = new Map()
  for (const input of fieldset.querySelectorAll('input, select, textarea')) values.set(input.name, input.type === 'checkbox' ? input.checked : input.value)
  return values
}

let listing = 0

/** The selected route's tools; the tool shown stays selected when the new list still has it, and only the latest listing is applied. */
async function loadTools() {
  const mine = ++listing
  const route = $('#try-route').value
  const select = $('#try-tool')
  let answer
  try {
    answer = await api('/api/try', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ route, method: 'tools/list' }) })
  } catch (error) {
    if (mine !== listing) return
    tools = new Map()
    select.replaceChildren()
    $('#try-result').textContent = `tools/list failed: ${error.message}`
    renderForm()
    return
  }
  if (mine !== listing) return
  const shown = select.value
  tools = new Map(answer.result.tools.map((tool) => [tool.name, tool]))
  select.replaceChildren(...[...tools.keys()].map((name) => new Option(name, name)))
  if (tools.has(shown)) select.value = shown
  renderForm()
}

function argumentsOf() {
  const args = {}
  for (const input of $('#try-args').querySelectorAll('input, select, textarea')) {
    const kind = input.dataset.kind
    if (kind === 'boolean') args[input.name] = input.checked
    else if (input.value === '') continue
    else if (kind === 'number') args[input.name] = Number(input.value)
    else if (kind === 'json') args[input.name] = JSON.parse(input.value)
    else args[input.name] = input.value
  }
  return args
}

async function callTool(event) {
  event.preventDefault()
  const result = $('#try-result')
  let args
  try {
    args = argumentsOf()
  } catch (error) {
    result.textContent = `An argument is not valid JSON: ${error.message}`
    return
  }
  result.textContent = 'Calling…'
  let answer
  try {
    answer = await api('/api/try', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ route: $('#try-route').value, method: 'tools/call', name: $('#try-tool').value, arguments: args }) })
  } catch (error) {
    result.textContent = `Error: ${error.message}`
    return
  }
  const texts = (answer.result.content ?? []).filter((block) => block.type === 'text').map((block) => block.text)
  result.textContent = `${answer.result.isError ? 'isError: ' : ''}${texts.join('\n')}\n\n${JSON.stringify(answer.result, null, 2)}`
}

function setupTryIt(routes, enabled) {
  if (!enabled) {
    $('#try-it').hidden = true
    return
  }
  const select = $('#try-route')
  select.replaceChildren(...routes.map((route) => new Option(route.location, route.location)))
  select.addEventListener('change', () => void loadTools())
  $('#try-tool').addEventListener('change', renderForm)
  $('#try-form').addEventListener('submit', (event) => void callTool(event))
  void loadTools()
}

// ---- polling -----------------------------------------------------------------------------------

let routesShown = false

async function poll() {
  try {
    const [overview, routes, upstreams, sessions, stats, errors] = await Promise.all(
      ['/api/overview', '/api/routes', '/api/upstreams', '/api/sessions', '/api/stats', '/api/errors'].map((path) => api(path)),
    )
    buckets = stats.buckets
    const rows = new Map(stats.calls.map((row) => [keyOf(row), { calls: row.calls, errors: errorCount(row.errors), buckets: row.buckets }]))
    history.push({ at: stats.at, rows })
    if (history.length > HISTORY) history.shift()
    renderOverview(overview)
    renderRoutes(routes.routes, sessions.sessions)
    renderUpstreams(upstreams.upstreams)
    renderCalls(stats.calls)
    renderErrors(errors.errors)
    drawCharts()
    if (!routesShown) {
      routesShown = true
      setupTryIt(routes.routes, overview.tryIt)
    }
    // Upstreams come and go: their tools are listed again every 30 s.
    if (overview.tryIt && Date.now() - listedAt > 30_000) void listProxyTools(routes.routes).then(() => renderRoutes(routes.routes, sessions.sessions))
    document.body.dataset.polls = String(Number(document.body.dataset.polls ?? 0) + 1)
  } catch (error) {
    $('#overview').textContent = `The admin API did not answer: ${error.message}`
  } finally {
    setTimeout(poll, INTERVAL_MS)
  }
}

void poll()
