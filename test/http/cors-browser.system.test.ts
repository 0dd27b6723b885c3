import t from 'tap'
import { browserAvailable, launchBrowser, pageOnAnotherOrigin } from '../helpers/browser.ts'
import { buildTestApp, testConfig, TOKEN } from '../helpers/app.ts'

// A web app on another origin calls the API from a real browser: a page served from a second
// port on 127.0.0.1 posts a plant with fetch and a bearer token. The browser enforces CORS.

/** The web app: one page, served from its own origin. */
const webApp = async (t: Parameters<typeof launchBrowser>[0]): Promise<string> =>
  await pageOnAnotherOrigin(t, '<!doctype html><title>Plant app</title><p>A web app on another origin.</p>')

/** What the page's own script sees when it calls the API. */
async function callFromPage (t: Parameters<typeof launchBrowser>[0], appOrigin: string, apiBase: string, id: number) {
  const browser = await launchBrowser(t)
  const page = await browser.newPage()
  const consoleErrors: string[] = []
  page.on('console', (message) => { if (message.type() === 'error') consoleErrors.push(message.text()) })
  await page.goto(`${appOrigin}/`)
  const result = await page.evaluate(async ({ apiBase, token, id }) => {
    try {
      const res = await fetch(`${apiBase}/plants`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ id, name: 'Boston fern', tag: 'indoor' })
      })
      return { status: res.status, body: await res.json(), requestId: res.headers.get('x-request-id') }
    } catch (err) {
      return { error: `${(err as Error).name}: ${(err as Error).message}` }
    }
  }, { apiBase, token: TOKEN, id })
  return { result, consoleErrors }
}

if (browserAvailable('the CORS browser test')) {
  t.test('a listed origin calls POST /plants from the browser', async (t) => {
    const appOrigin = await webApp(t)
    const api = await buildTestApp(t, await testConfig(t, { CORS_ORIGINS: appOrigin }))
    const apiBase = await api.listen({ port: 0, host: '127.0.0.1' })
    t.not(new URL(apiBase).origin, appOrigin, 'two origins')
    const { result } = await callFromPage(t, appOrigin, apiBase, 1)
    t.match(result, { status: 200, body: { name: 'Boston fern', tag: 'indoor' } })
    t.match((result as { requestId?: string }).requestId, /^[0-9a-f-]{36}$/, 'an exposed header is readable')
  })

  t.test('an origin that is not listed fails in the browser with a CORS error', async (t) => {
    const appOrigin = await webApp(t)
    const api = await buildTestApp(t, await testConfig(t, { CORS_ORIGINS: 'http://127.0.0.1:1' }))
    const apiBase = await api.listen({ port: 0, host: '127.0.0.1' })
    const { result, consoleErrors } = await callFromPage(t, appOrigin, apiBase, 2)
    t.same(result, { error: 'TypeError: Failed to fetch' }, 'the page sees a network error')
    t.match(consoleErrors.join('\n'), /blocked by CORS policy/, 'the browser says why')
  })

  t.test('with CORS_ORIGINS unset, the browser blocks every other origin', async (t) => {
    const appOrigin = await webApp(t)
    const api = await buildTestApp(t)
    const apiBase = await api.listen({ port: 0, host: '127.0.0.1' })
    const { result, consoleErrors } = await callFromPage(t, appOrigin, apiBase, 3)
    t.same(result, { error: 'TypeError: Failed to fetch' })
    t.match(consoleErrors.join('\n'), /blocked by CORS policy/)
  })
}
