import createClient from 'openapi-fetch'
import t from 'tap'
import type { paths } from '../generated/openapi.js'
import { buildTestApp, TOKEN } from './helper.js'

t.test('a consumer with openapi-fetch on the generated types, over real HTTP', async (t) => {
  const app = await buildTestApp(t)
  const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' })
  const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${TOKEN}` } })

  const created = await client.POST('/plants', { body: { id: 7, name: 'Snake plant', tag: 'hardy' } })
  t.equal(created.response.status, 200)
  t.same(created.data, { name: 'Snake plant', tag: 'hardy' })

  const conflict = await client.POST('/plants', { body: { id: 7, name: 'Other' } })
  t.equal(conflict.response.status, 409)
  t.same(conflict.error, { error: 409, message: 'Plant 7 already exists with a different name or tag' })

  const anonymous = await createClient<paths>({ baseUrl }).POST('/plants', { body: { id: 8, name: 'x' } })
  t.equal(anonymous.response.status, 401)
  t.equal(anonymous.response.headers.get('www-authenticate'), 'Bearer realm="plants"')
})
