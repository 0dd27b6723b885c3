import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import { stringify } from 'yaml'
import { killGroup, spawnGroup } from './children.ts'
import { freePort } from './ports.ts'
import { logExcerpt } from './log-file.ts'

// Debian's Prometheus and promtool (package prometheus, which npm test's pretest installs), for the
// tests of the rules and the dashboard under deploy/monitoring/.

/** The Grafana dashboard, as shipped. */
export const DASHBOARD = JSON.parse(readFileSync(new URL('../../deploy/monitoring/dashboard.json', import.meta.url), 'utf8'))

/** Every query of the dashboard's panels, by panel title, with Grafana's variables replaced by `substitutes`. */
export function dashboardQueries (substitutes: Record<string, string>): Array<{ panel: string, expr: string }> {
  return DASHBOARD.panels.filter((panel: any) => panel.type !== 'row').flatMap((panel: any) => panel.targets.map((target: any) => ({
    panel: panel.title,
    expr: Object.entries(substitutes).reduce((expr, [name, value]) => expr.replaceAll(name, value), target.expr)
  })))
}

/** Runs promtool; its status and what it printed. */
export function promtool (...args: string[]): { status: number | null, output: string } {
  const run = spawnSync('promtool', args, { encoding: 'utf8', timeout: 60_000 })
  return { status: run.error === undefined ? run.status : null, output: `${run.stdout ?? ''}${run.stderr ?? ''}${run.error?.message ?? ''}` }
}

/** A skip reason when Prometheus is not installed, outside CI; in CI a missing one fails the tests instead. */
export const needsPrometheus = {
  skip: promtool('--version').status !== 0 && process.env.CI === undefined && 'no promtool or prometheus (scripts/ensure-tool.sh installs Debian\'s prometheus)'
}

export interface Sample { metric: Record<string, string>, value: [number, string] }

export interface Prometheus {
  url: string
  /** An instant query's result; a query Prometheus refuses (bad PromQL) throws its error. */
  query: (expr: string, time?: number) => Promise<Sample[]>
  /** The values of `label` on the series `match` selects: what Grafana's label_values(match, label) lists. */
  labelValues: (label: string, match: string) => Promise<string[]>
  /** Waits until `expr` returns a series, within `ms`; the seconds it took. */
  until: (expr: string, ms: number) => Promise<number>
}

// Prometheus answers within milliseconds; a hung one fails the test instead of holding it.
const REQUEST_TIMEOUT_MS = 10_000
const READY_TIMEOUT_MS = 60_000

/** Starts Prometheus on `config` (a prometheus.yml as an object) with its data in the test's dir, stopped when the test ends. */
export async function startPrometheus (t: Test, config: Record<string, unknown>): Promise<Prometheus> {
  const dir = t.testdir()
  const file = join(dir, 'prometheus.yml')
  writeFileSync(file, stringify(config))
  const url = `http://127.0.0.1:${await freePort()}`
  const child = spawnGroup('prometheus', [`--config.file=${file}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=${new URL(url).host}`, '--log.level=warn'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (chunk) => { output += chunk })
  child.stderr!.on('data', (chunk) => { output += chunk })
  t.teardown(() => { killGroup(child) })

  const api = async (path: string): Promise<any> => {
    const response = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
    const body = await response.json() as { status: string, data: any, error?: string }
    if (body.status !== 'success') throw new Error(`Prometheus refused ${path}: ${body.error}`)
    return body.data
  }
  const query = async (expr: string, time?: number): Promise<Sample[]> =>
    (await api(`/api/v1/query?query=${encodeURIComponent(expr)}${time === undefined ? '' : `&time=${time}`}`)).result
  const labelValues = async (label: string, match: string): Promise<string[]> => await api(`/api/v1/label/${label}/values?match[]=${encodeURIComponent(match)}`)
  const until = async (expr: string, ms: number): Promise<number> => {
    const started = performance.now()
    while ((await query(expr)).length === 0) {
      if (performance.now() - started > ms) throw new Error(`no ${expr} after ${ms} ms: ${logExcerpt('prometheus', output)}`)
      await sleep(250)
    }
    return (performance.now() - started) / 1000
  }

  const started = performance.now()
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Prometheus exited ${child.exitCode}: ${logExcerpt('prometheus', output)}`)
    if (performance.now() - started > READY_TIMEOUT_MS) throw new Error(`Prometheus not ready after ${READY_TIMEOUT_MS} ms: ${logExcerpt('prometheus', output)}`)
    try {
      if ((await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })).ok) break
    } catch {}
    await sleep(100)
  }
  return { url, query, labelValues, until }
}
