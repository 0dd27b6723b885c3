import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Locator, Page } from 'playwright-core'
import t from 'tap'
import { browserAvailable, launchBrowser } from './browser.js'
import { buildTestApp, TOKEN } from './helper.js'

// /docs for a person, in a real browser.
const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url))

if (browserAvailable('the /docs browser test')) {
  t.test('/docs works for a person in a real browser', async (t) => {
    const app = await buildTestApp(t)
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const browser = await launchBrowser(t)
    const page = await browser.newPage()
    const hosts = new Set<string>()
    page.on('request', (request) => {
      const url = new URL(request.url())
      if (url.protocol.startsWith('http')) hosts.add(url.host)
    })

    await page.goto(`${base}/docs/`)
    t.equal(await page.title(), 'Plant Store API', 'page title')
    await page.locator('.info .title', { hasText: 'Plant Store' }).waitFor()
    t.match(await page.locator('.info .title').innerText(), /Plant Store\s*1\.0\.0/, 'title and version render')
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

    await page.reload()
    await page.locator('.info .title').waitFor()
    t.equal(await page.locator('.auth-wrapper button.authorize.locked').count(), 1, 'the Authorize state persists across a reload')

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
  })
}

async function authorize (page: Page, token: string): Promise<void> {
  await page.locator('.auth-wrapper button.authorize').click()
  await page.locator('.modal-ux input').fill(token)
  await page.locator('.modal-ux button.authorize').click()
  await page.locator('.modal-ux button.close-modal').click()
}

async function tryItOut (operation: Locator): Promise<void> {
  // Deep links reopen the operation after a reload; only a closed one needs the click.
  if (!/\bis-open\b/.test(await operation.getAttribute('class') ?? '')) await operation.locator('.opblock-summary').click()
  const button = operation.locator('button.try-out__btn')
  if ((await button.innerText()).trim() === 'Try it out') await button.click()
}

async function liveResponse (page: Page): Promise<{ status: string, body: string }> {
  const row = page.locator('.live-responses-table .response')
  await row.waitFor()
  return {
    status: (await row.locator('.response-col_status').innerText()).trim(),
    body: await row.locator('.response-col_description pre.microlight, .response-col_description .highlight-code pre').first().innerText()
  }
}
