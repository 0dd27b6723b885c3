// The bench's baseline: a bare Fastify app with one hand-written route, no auth, no schema,
// an in-memory Map, and the same request and response shapes as the service.
import Fastify from 'fastify'

const plants = new Map<number, { name: string, tag?: string }>()
const app = Fastify()

app.post('/plants', async (request, reply) => {
  const body = request.body as { id?: unknown, name?: unknown, tag?: unknown }
  if (!Number.isInteger(body?.id) || typeof body.name !== 'string' || (body.tag !== undefined && typeof body.tag !== 'string')) {
    return reply.code(400).send({ error: 400, message: 'invalid plant' })
  }
  const plant = body.tag === undefined ? { name: body.name } : { name: body.name, tag: body.tag as string }
  const existing = plants.get(body.id as number)
  if (existing !== undefined && (existing.name !== plant.name || existing.tag !== plant.tag)) {
    return reply.code(409).send({ error: 409, message: 'conflict' })
  }
  plants.set(body.id as number, plant)
  return plant
})
app.get('/healthz', async () => ({ status: 'ok' }))

const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' })
process.stdout.write(`listening on ${address}\n`)
process.on('SIGTERM', () => { app.close().then(() => process.exit(0)) })
