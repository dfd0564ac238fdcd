/**
 * An example handler to copy: a small deployment service, one of each handler feature.
 *
 *   deploy                              multi-step work: progress, logs at four levels, cancellation
 *                                       with cleanup, structured output checked by an outputSchema
 *   rollback                            a destructive change confirmed by the user (form elicitation)
 *   audit                               long-running work as a task (on a route with `tasks.enabled`):
 *                                       the client polls it from any worker, cancels it, collects it
 *   example://deployments/status        a resource that changes; subscribers are told when it does
 *   example://services/{service}/history   a resource template whose variable completes
 *   release_notes                       a prompt whose arguments complete (version depends on service)
 *
 * `config/gateway.yaml` serves it at `/example`; the domain model is in `example-fleet.ts`.
 */
import { defineHandler, McpError, RpcCode, ToolError, type ElicitationSchema, type ElicitResult } from 'mcp-edge'
import { ENVIRONMENTS, Fleet, INSTANCES, SERVICES, isService, major, type Environment, type Service } from './example-fleet.ts'

const STATUS_URI = 'example://deployments/status'
const HISTORY_TEMPLATE = 'example://services/{service}/history'
const historyUri = (service: string) => `example://services/${service}/history`

/** The deploy tool's steps; progress counts finished steps and its message says what the step did. */
const STEPS: { name: string; done: (service: Service, environment: Environment, version: string) => string }[] = [
  { name: 'check', done: (s, _e, v) => `Checked ${s} ${v} against the release policy` },
  { name: 'build', done: (s, _e, v) => `Built image registry.internal/${s}:${v}` },
  { name: 'migrate', done: () => 'Applied database migrations' },
  { name: 'roll out', done: (_s, e) => `Rolled out to ${INSTANCES[e]} instance${INSTANCES[e] === 1 ? '' : 's'}` },
  { name: 'verify', done: () => 'Health checks passed' },
]

/** The rollback confirmation: a flat form, as elicitation requires (primitives and enums only). */
const CONFIRM_FORM: ElicitationSchema = {
  type: 'object',
  properties: {
    reason: { type: 'string', title: 'Reason', description: 'Recorded in the service history', default: 'Rolled back from MCP' },
    strategy: {
      type: 'string',
      title: 'Strategy',
      oneOf: [
        { const: 'gradual', title: 'Gradually, one instance at a time' },
        { const: 'immediate', title: 'Immediately, all instances at once' },
      ],
      default: 'gradual',
    },
    page_oncall: { type: 'boolean', title: 'Page the on-call engineer', default: false },
  },
  required: ['reason', 'strategy'],
}

// Both tools take a service and an environment; the enums let clients offer a choice. `as const`
// keeps the literal types, so the tools' arguments are typed from these schemas.
const target = {
  service: { type: 'string', enum: SERVICES, description: 'The service' },
  environment: { type: 'string', enum: ENVIRONMENTS, description: 'Where it runs' },
} as const

/** Resolves after `ms`, or at once when the request is cancelled (so cancellation is not delayed a step). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => { clearTimeout(timer); resolve() }, { once: true })
  })
}

export default defineHandler((mcp, server) => {
  // State lives in this closure, not the module: each route (and each test's gateway) gets a fresh
  // fleet. With `workers` > 1 every worker would have its own; a real handler keeps it in a database.
  const fleet = new Fleet()
  // A route option, so a demo can be slow enough to watch and a test fast (config: options.step_ms).
  const stepMs = Number(server.options.step_ms ?? 400)
  const statusChanged = () => server.resourceUpdated(STATUS_URI)
  const json = (value: unknown) => JSON.stringify(value, null, 2)

  server.register(
    // `args` is typed from inputSchema (service: Service, …), which the gateway validated it against.
    mcp.tool('deploy', async ({ service, environment, version }, ctx) => {
      const log = (level: 'debug' | 'info' | 'warning' | 'error', data: unknown) => ctx.log(level, data, 'deploy')
      // Plain values: the fleet's own record changes as the deployment goes on.
      const { version: from, state } = fleet.current(environment, service)
      log('debug', { service, environment, from, to: version, steps: STEPS.map((s) => s.name) })

      // Refusals come before any work, so there is nothing to clean up; the model reads the text.
      if (environment === 'production' && !fleet.versions(service, 'staging').includes(version)) {
        log('error', `Refused: ${service} ${version} was never deployed to staging`)
        throw new ToolError(`${service} ${version} must be deployed to staging before production.`)
      }
      if (state === 'deploying') throw new ToolError(`${service} is already being deployed to ${environment}.`)
      if (major(version) !== major(from)) {
        log('warning', `Major version change for ${service}: ${from} → ${version}; check for breaking changes`)
      }

      fleet.begin(environment, service, version)
      await statusChanged()
      let outcome: 'deployed' | 'cancelled' | 'failed' = 'failed'
      try {
        for (const [index, step] of STEPS.entries()) {
          await sleep(stepMs, ctx.signal)
          if (ctx.signal.aborted) {
            // The client will not read this (a cancelled request gets no response, and ctx.log stops
            // reaching it), but the gateway log keeps it; throwing skips the remaining steps.
            outcome = 'cancelled'
            log('warning', `Cancelled during "${step.name}"; ${service} stays at ${from} in ${environment}`)
            throw new Error('deployment cancelled')
          }
          const message = step.done(service, environment, version)
          ctx.progress(index + 1, STEPS.length, message)
          log('info', message)
        }
        outcome = 'deployed'
      } finally {
        // Cleanup runs however the loop ends: the fleet never stays "deploying", and subscribers see it.
        fleet.finish(environment, service, outcome)
        await statusChanged()
      }
      // An object return is structuredContent (plus its JSON as text), checked against outputSchema:
      // by the compiler (a missing field does not compile) and again by the gateway at run time.
      return { service, environment, version, previous_version: from, instances: INSTANCES[environment] }
    }, {
      title: 'Deploy a service',
      description: 'Deploys a version of a service to staging or production, in five steps with progress. ' +
        'Production only takes versions already deployed to staging. Cancel the request to stop it.',
      inputSchema: {
        type: 'object',
        properties: { ...target, version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+$', description: 'Semantic version, e.g. 1.5.0' } },
        required: ['service', 'environment', 'version'],
        additionalProperties: false,
      },
      outputSchema: {
        type: 'object',
        properties: {
          service: { type: 'string' },
          environment: { type: 'string' },
          version: { type: 'string' },
          previous_version: { type: 'string' },
          instances: { type: 'integer' },
        },
        required: ['service', 'environment', 'version', 'previous_version', 'instances'],
      },
      annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
    }),

    mcp.tool('rollback', async ({ service, environment }, ctx) => {
      const { version: from, previous: to, state } = fleet.current(environment, service)
      if (state === 'deploying') throw new ToolError(`${service} is being deployed to ${environment}; try again when it ends.`)
      if (to === undefined) throw new ToolError(`${service} in ${environment} has no earlier version to roll back to.`)

      let answer: ElicitResult
      try {
        answer = await ctx.elicit(`Roll back ${service} in ${environment} from ${from} to ${to}?`, CONFIRM_FORM)
      } catch (error) {
        if (ctx.signal.aborted) throw error
        // No elicitation capability (or no answer in time): a destructive change needs a yes from the
        // user, so refuse rather than proceed with the form's defaults, and say why.
        throw new ToolError(`Rollback needs the user's confirmation and could not get it ` +
          `(${error instanceof Error ? error.message : String(error)}). Nothing was rolled back; try from a client that supports elicitation.`)
      }
      if (answer.action === 'decline') return `Rollback declined; ${service} stays at ${from} in ${environment}.`
      if (answer.action === 'cancel') return `Rollback dismissed without an answer; ${service} stays at ${from} in ${environment}.`

      // The user may take minutes to answer: act only if nothing moved meanwhile.
      const now = fleet.current(environment, service)
      if (now.version !== from || now.state !== 'live') {
        throw new ToolError(`${service} in ${environment} changed while you were deciding; nothing was rolled back.`)
      }
      // The client filled the form, but nothing guarantees it followed the schema: check what is used.
      const content = answer.content ?? {}
      const reason = typeof content.reason === 'string' && content.reason.trim() !== '' ? content.reason.trim() : 'Rolled back from MCP'
      const strategy = content.strategy === 'immediate' ? 'immediate' : 'gradual'
      fleet.rollback(environment, service, `${reason} (${strategy})`)
      await statusChanged()
      ctx.log('notice', `${service} rolled back to ${to} in ${environment}: ${reason}`, 'rollback')
      const paged = content.page_oncall === true ? ' The on-call engineer was paged.' : ''
      return `Rolled back ${service} in ${environment} from ${from} to ${to} (${strategy}).${paged}`
    }, {
      title: 'Roll back a service',
      description: 'Returns a service to the version it ran before its last deployment, after asking the user to confirm.',
      inputSchema: { type: 'object', properties: target, required: ['service', 'environment'], additionalProperties: false },
      annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: false },
    }),

    mcp.tool('audit', async ({ environment }, ctx) => {
      const findings: { service: Service; version: string; state: string; healthy: boolean }[] = []
      for (const [index, service] of SERVICES.entries()) {
        // Progress messages become the task's status message (tasks/get), and the signal is the task's:
        // tasks/cancel from any worker stops the audit here.
        ctx.progress(index, SERVICES.length, `Auditing ${service} in ${environment}`)
        await sleep(stepMs, ctx.signal)
        if (ctx.signal.aborted) throw new Error('audit cancelled')
        const { version, state } = fleet.current(environment, service)
        findings.push({ service, version, state, healthy: state === 'live' })
      }
      return { environment, audited: findings.length, findings }
    }, {
      title: 'Audit an environment',
      description: 'Checks every service in an environment, one at a time: slow, so it runs as a task when the client takes tasks.',
      inputSchema: { type: 'object', properties: { environment: target.environment }, required: ['environment'], additionalProperties: false },
      annotations: { readOnlyHint: true, openWorldHint: false },
      taskSupport: 'optional',
    }),

    mcp.resource(STATUS_URI, 'deployment-status', () => json(fleet.status()), {
      title: 'Deployment status',
      description: 'What runs where; subscribe to hear when a deploy or rollback changes it',
      mimeType: 'application/json',
    }),

    // Returning undefined for an unknown service makes the read a "resource not found" error (-32002).
    // `service` is typed from the template: a string, or a list when the URI holds a comma.
    mcp.resourceTemplate(HISTORY_TEMPLATE, 'service-history', (_uri, { service }) => {
      return typeof service === 'string' && isService(service) ? json({ service, history: fleet.history(service) }) : undefined
    }, {
      title: 'Service history',
      description: 'Every deployment, cancellation and rollback of one service',
      mimeType: 'application/json',
      completions: { service: (prefix) => SERVICES.filter((s) => s.startsWith(prefix)) },
    }),

    // `service` is a string (a required argument), `version` may be undefined.
    mcp.prompt('release_notes', ({ service, version }) => {
      // A prompt error is a protocol error (invalid params), unlike a tool's isError result.
      if (!isService(service)) throw new McpError(RpcCode.InvalidParams, `Unknown service: ${service}`)
      const which = version === undefined || version === '' ? 'its latest version' : `version ${version}`
      return [
        // The history travels with the prompt as an embedded resource, so the model needs no extra read.
        { role: 'user', content: { type: 'resource', resource: { uri: historyUri(service), mimeType: 'application/json', text: json(fleet.history(service)) } } },
        { role: 'user', content: { type: 'text', text: `Draft short release notes for ${service}, ${which}, from the deployment history above. Mention rollbacks and cancelled deploys.` } },
      ]
    }, {
      title: 'Release notes',
      description: 'Asks the model to draft release notes from a service’s deployment history',
      arguments: {
        service: { description: 'The service', required: true },
        version: { description: 'The version to describe (the latest when omitted)' },
      },
      completions: {
        service: (prefix) => SERVICES.filter((s) => s.startsWith(prefix)),
        // `context` holds the arguments already chosen: versions are offered for the chosen service only.
        version: (prefix, context) => {
          const service = context.service ?? ''
          return isService(service) ? fleet.versions(service).filter((v) => v.startsWith(prefix)) : []
        },
      },
    }),
  )
})
