// Run-time catalogue changes, per-session servers and the guessing game across two workers of one
// host (the cluster store). A forwarder opens a fresh connection per request, so the primary deals
// consecutive requests to the workers in turn: a change that stayed on the worker that made it, or a
// game held in one worker's memory, would fail every other request.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import { catalogueRoutes, catalogueScenarios } from './catalogue-scenarios.ts'
import { startGatewayProcess } from './gateway-process.ts'
import { roundRobin } from './round-robin.ts'

t.setTimeout(120_000)
const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}.ts`, import.meta.url))
const gateway = await startGatewayProcess(t, { workers: 2, drain_timeout: 1, routes: catalogueRoutes(fixture('guess-pid'), fixture('catalogue')) }, 2, 60_000)
const balancer = await roundRobin(t, [gateway.url])
catalogueScenarios(t, () => balancer.url, 2)
