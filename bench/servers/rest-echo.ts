/**
 * The REST API of the openapi rows: `GET /echo?message=…` answers `echo: …` as text/plain, and
 * @fastify/swagger serves the document generated from that route's schema at /openapi.json. wrk
 * calls it directly (`rest-direct`, BENCH_REST) and through an openapi upstream (`edge-proxy-openapi`).
 */
import Fastify from 'fastify'
import swagger from '@fastify/swagger'

const app = Fastify({ logger: false })
await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 'bench echo', version: '1.0.0' } } })
app.get('/echo', {
  schema: {
    operationId: 'echo',
    summary: 'Echo a message',
    querystring: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } },
    response: { 200: { type: 'string' } },
  },
}, async (request, reply) => reply.type('text/plain').send(`echo: ${(request.query as { message: string }).message}`))
app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
process.on('SIGTERM', () => process.exit(0))
