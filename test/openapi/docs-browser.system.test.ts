import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Locator, Page } from 'playwright-core'
import t from 'tap'
import { browserAvailable, launchBrowser, pageOnAnotherOrigin } from '../helpers/browser.ts'
import { buildTestApp, document, testConfig, TOKEN } from '../helpers/app.ts'
import { AUDIENCE, startProvider } from '../helpers/identity-provider.ts'

// /docs for a person, in a real browser.
const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url))

if (browserAvailable('the /docs browser test')) {
  t.test('/docs works for a person in a real browser', async (t) => {
    const app = await buildTestApp(t)
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const browser = await launchBrowser(t)
    const page = await browser.newPage()
    // Every Content Security Policy violation, as the page's own event and as the console says it.
    await page.addInitScript({ content: 'window.violations = []; document.addEventListener("securitypolicyviolation", (e) => window.violations.push(e.violatedDirective + " " + e.blockedURI))' })
    const cspErrors: string[] = []
    page.on('console', (message) => { if (/Content Security Policy/i.test(message.text())) cspErrors.push(message.text()) })
    const hosts = new Set<string>()
    page.on('request', (request) => {
      const url = new URL(request.url())
      if (url.protocol.startsWith('http')) hosts.add(url.host)
    })

    const served = await page.goto(`${base}/docs/`)
    t.match(served?.headers()['content-security-policy'], /script-src 'self';.*frame-ancestors 'none'|frame-ancestors 'none';.*script-src 'self';/, 'the page is served under its CSP')
    t.notMatch(served?.headers()['content-security-policy'], /unsafe-inline|unsafe-eval/, 'with no unsafe-inline or unsafe-eval')
    t.equal(await page.title(), 'Plant Store', 'page title: the document\'s')
    await page.locator('.info .title', { hasText: 'Plant Store' }).waitFor()
    t.match(await page.locator('.info .title').innerText(), new RegExp(`Plant Store\\s*${document.info.version.replaceAll('.', '\\.')}`), 'title and version render')
    const operation = page.locator('.opblock-post', { has: page.locator('.opblock-summary-path', { hasText: '/plants' }) })
    await operation.waitFor()
    t.equal(await page.locator('.topbar').count(), 0, 'no Explore bar')

    await authorize(page, TOKEN)
    await tryItOut(operation)
    const example = await operation.locator('textarea.body-param__text').inputValue()
    t.same(JSON.parse(example), { id: 1, name: 'Boston fern', tag: 'indoor' }, 'Try it out starts from the example plant')
    await operation.locator('button.execute').click()
    const ok = await liveResponse(page)
    t.equal(ok.status, '200')
    t.same(JSON.parse(ok.body), { name: 'Boston fern', tag: 'indoor' }, 'the Plant body is rendered')

    // The page again, without the deep link Try it out left in the address (#/plants/createPlant):
    // reloading that scrolls to the operation as the page renders. Once in CI, after a reload, the
    // Authorize button never held still to be clicked; the scroll is the likely cause, not a seen one.
    await page.goto(`${base}/docs/`)
    await page.locator('.info .title').waitFor()
    t.equal(await page.locator('.auth-wrapper button.authorize.locked').count(), 1, 'the Authorize state persists to the next page load')

    await page.locator('.auth-wrapper button.authorize').click()
    await page.locator('.modal-ux button', { hasText: 'Logout' }).click()
    await page.locator('.modal-ux button.close-modal').click()
    await authorize(page, 'not-the-right-token-000000')
    await tryItOut(operation)
    await operation.locator('button.execute').click()
    const denied = await liveResponse(page)
    t.equal(denied.status, '401')
    t.same(JSON.parse(denied.body), { error: 401, message: 'Invalid bearer token' }, 'the Error body is rendered')

    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTIFACTS, 'docs.png'), fullPage: true })
    t.same([...hosts], [new URL(base).host], 'no request left for any host but the service')
    t.same({ events: await page.evaluate('window.violations'), console: cspErrors }, { events: [], console: [] }, 'Swagger UI did all this under its CSP, with no violation')
  })

  t.test('Authorize with a pasted identity-provider token works as with a static key', async (t) => {
    const provider = await startProvider(t)
    const app = await buildTestApp(t, await testConfig(t, { JWT_ISSUER: provider.issuer, JWT_AUDIENCE: AUDIENCE }))
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const page = await (await launchBrowser(t)).newPage()
    await page.goto(`${base}/docs/`)
    const operation = page.locator('.opblock-post', { has: page.locator('.opblock-summary-path', { hasText: '/plants' }) })
    await operation.waitFor()
    await authorize(page, await provider.mint())
    await tryItOut(operation)
    await operation.locator('button.execute').click()
    const ok = await liveResponse(page)
    t.equal(ok.status, '200')
    t.same(JSON.parse(ok.body), { name: 'Boston fern', tag: 'indoor' }, 'the plant is stored')
  })

  t.test('a page on another origin cannot frame /docs', async (t) => {
    const app = await buildTestApp(t)
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const framing = await pageOnAnotherOrigin(t, `<!doctype html><title>Framing</title><iframe src="${base}/docs/" width="800" height="600"></iframe>`)
    const browser = await launchBrowser(t)
    const page = await browser.newPage()
    const refused = new Promise<string>((resolve) => page.on('console', (message) => { if (/frame-ancestors/.test(message.text())) resolve(message.text()) }))
    await page.goto(`${framing}/`)
    t.match(await refused, /violates .*"frame-ancestors 'none'"\. The request has been blocked/, 'the browser blocks the frame, citing frame-ancestors')
    const frame = page.frames().find((f) => f !== page.mainFrame())
    t.notOk(frame !== undefined && frame.url().startsWith(base) && await frame.locator('#swagger-ui').count() > 0, 'the docs page is not rendered inside the frame')
    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTIFACTS, 'docs-framed.png') })
  })
}

async function authorize (page: Page, token: string): Promise<void> {
  await page.locator('.auth-wrapper button.authorize').click()
  await page.locator('.modal-ux input').fill(token)
  await page.locator('.modal-ux button.authorize').click()
  await page.locator('.modal-ux button.close-modal').click()
}

async function tryItOut (operation: Locator): Promise<void> {
  await operation.locator('.opblock-summary').click()
  await operation.locator('button.try-out__btn', { hasText: 'Try it out' }).click()
}

async function liveResponse (page: Page): Promise<{ status: string, body: string }> {
  const row = page.locator('.live-responses-table .response')
  await row.waitFor()
  return {
    status: (await row.locator('.response-col_status').innerText()).trim(),
    body: await row.locator('.response-col_description pre.microlight, .response-col_description .highlight-code pre').first().innerText()
  }
}
