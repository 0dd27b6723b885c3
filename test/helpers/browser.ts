import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'
import t, { type Test } from 'tap'

// Debian's Chromium, driven by playwright-core, for the tests that need a real browser (installed
// by scripts/ensure-tool.sh before npm test). No downloaded browser build: none can be fetched here.
const CHROMIUM = '/usr/bin/chromium'

/** True when the browser is there; otherwise the file is skipped loudly, or fails under CI. */
export function browserAvailable (what: string): boolean {
  if (existsSync(CHROMIUM)) return true
  if (process.env.CI !== undefined) {
    t.fail(`no Chromium at ${CHROMIUM}: CI must run ${what}`)
  } else {
    console.error(`\n!!! SKIPPING ${what}: no Chromium at ${CHROMIUM}. Install it: sudo apt-get install chromium\n`)
    t.plan(0, 'no Chromium on this machine') // the whole file is reported as skipped
  }
  return false
}

/** A fresh headless browser profile, closed and removed when the test ends. */
export async function launchBrowser (t: Test): Promise<BrowserContext> {
  const profile = mkdtempSync(join(tmpdir(), 'plant-store-chromium-'))
  // Without the background-networking flags Chromium keeps calling hosts this machine cannot reach.
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync']
  })
  t.teardown(async () => {
    await browser.close()
    rmSync(profile, { recursive: true, force: true })
  })
  return browser
}

/** Serves one HTML page from its own origin (a second port on 127.0.0.1), until the test ends; its origin. */
export async function pageOnAnotherOrigin (t: Test, html: string): Promise<string> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    response.end(html)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
