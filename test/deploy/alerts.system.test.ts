import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parse, stringify } from 'yaml'
import { DASHBOARD, dashboardQueries, needsPrometheus, promtool } from '../helpers/prometheus.ts'

// deploy/monitoring/, offline: the rules pass promtool's check, and its unit tests
// (test/deploy/alerts/) fire every alert on the series that should fire it and keep it quiet on a
// healthy one; the PrometheusRule holds the same rules; every alert says what fired it, how bad it
// is and where its runbook is; every dashboard query is PromQL. Against a real Prometheus scraping
// the service: monitoring.system.test.ts.

const root = fileURLToPath(new URL('../../', import.meta.url))
const RULES = join(root, 'deploy/monitoring/rules.yaml')
const TESTS = join(root, 'test/deploy/alerts')
const rules = parse(readFileSync(RULES, 'utf8'))
const alerts: any[] = rules.groups.flatMap((group: any) => group.rules.filter((rule: any) => rule.alert !== undefined))
const records: any[] = rules.groups.flatMap((group: any) => group.rules.filter((rule: any) => rule.record !== undefined))
const testFiles = readdirSync(TESTS).filter((file) => file.endsWith('.yaml')).map((file) => join(TESTS, file))
// What Grafana puts in a query before Prometheus sees it.
const GRAFANA_VARIABLES: Record<string, string> = { $__rate_interval: '1m', $instance: '.*' }

t.test('the rules pass promtool check rules, as a file and as the PrometheusRule', needsPrometheus, async (t) => {
  const checked = promtool('check', 'rules', RULES)
  t.equal(checked.status, 0, checked.output)
  const [resource] = [parse(readFileSync(join(root, 'deploy/kubernetes/components/monitoring/prometheus-rule.yaml'), 'utf8'))]
  t.same(resource.spec.groups, rules.groups, 'the PrometheusRule holds the very same groups')
  const file = join(t.testdir(), 'prometheus-rule.rules.yaml')
  writeFileSync(file, stringify({ groups: resource.spec.groups }))
  t.equal(promtool('check', 'rules', file).status, 0, 'and they check as rules')
})

t.test('promtool test rules: each alert fires on its fault, and stays quiet when healthy', needsPrometheus, async (t) => {
  const tested = promtool('test', 'rules', ...testFiles)
  t.equal(tested.status, 0, tested.output)
  t.equal((tested.output.match(/SUCCESS/g) ?? []).length, testFiles.length, `${testFiles.length} files of tests pass`)

  // Which alerts the tests see firing, and which they see quiet at some time.
  const firing = new Set<string>()
  const quiet = new Set<string>()
  for (const file of testFiles) {
    for (const test of parse(readFileSync(file, 'utf8')).tests) {
      for (const { alertname, exp_alerts: expected } of test.alert_rule_test ?? []) (expected.length > 0 ? firing : quiet).add(alertname)
    }
  }
  for (const { alert } of alerts) {
    t.ok(firing.has(alert), `${alert} is tested firing`)
    t.ok(quiet.has(alert), `${alert} is tested quiet`)
  }

  // The tests can fail: the first of slo.yaml's (a burn of 20 pages) on rules whose page waits
  // for a burn of 50 instead of 14.4.
  const lenient = join(t.testdir(), 'rules.yaml')
  writeFileSync(lenient, readFileSync(RULES, 'utf8').replaceAll('> 14.4 * 0.001', '> 50 * 0.001'))
  const slo = join(t.testdir(), 'slo.yaml')
  const sloTests = parse(readFileSync(join(TESTS, 'slo.yaml'), 'utf8'))
  writeFileSync(slo, stringify({ ...sloTests, rule_files: [lenient], tests: sloTests.tests.slice(0, 1) }))
  const failed = promtool('test', 'rules', slo)
  t.not(failed.status, 0, 'a rule that no longer fires fails its test')
  t.match(failed.output, 'alertname: PlantStoreErrorBudgetBurn')
})

t.test('every alert: a severity, a summary, a description with the figure that fired it, and its runbook in the docs', async (t) => {
  const operating = readFileSync(join(root, 'docs/operating.md'), 'utf8')
  // GitHub's anchors: the heading in lower case, spaces as hyphens, punctuation dropped.
  const anchors = new Set([...operating.matchAll(/^#+ (.+)$/gm)].map(([, heading]) => heading.toLowerCase().replace(/[^\w\- ]/g, '').replaceAll(' ', '-')))
  t.ok(alerts.length >= 15, `${alerts.length} alerts`)
  for (const { alert, labels, annotations, expr } of alerts) {
    t.match(labels.severity, /^(critical|warning)$/, `${alert}: severity ${labels.severity}`)
    t.ok(annotations.summary.length > 0, `${alert}: a summary`)
    // A target gone or down has no figure but itself: its description names it and for how long.
    if (!/^(absent\(|up\{)/.test(expr)) t.match(annotations.description, /\{\{ \$value /, `${alert}: the description gives the figure that fired it`)
    // What it reads, the recording rules it reads included.
    const reads = [expr, ...records.filter(({ record }) => expr.includes(record)).map((rule) => rule.expr)]
    for (const read of expr.includes('plant_store:') ? reads.slice(1) : reads) {
      t.match(read, 'job="plant-store"', `${alert}: the job of the docs' scrape config and of the ServiceMonitor`)
      t.notMatch(read, /\b(pod|container|service|endpoint)=/, `${alert}: no label only Kubernetes gives`)
    }
    const [file, anchor] = annotations.runbook_url.split('#')
    t.equal(file, 'docs/operating.md', `${alert}: its runbook is in the operating docs`)
    t.ok(anchors.has(anchor), `${alert}: docs/operating.md has the section #${anchor}`)
  }
})

t.test('every dashboard query is valid PromQL', needsPrometheus, async (t) => {
  const queries = dashboardQueries(GRAFANA_VARIABLES)
  t.ok(queries.length >= 25, `${queries.length} queries`)
  // promtool parses expressions as it checks recording rules; a query it refuses fails the check.
  const file = join(t.testdir(), 'queries.yaml')
  writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules: queries.map(({ expr }, i) => ({ record: `dashboard:query_${i}`, expr })) }] }))
  const checked = promtool('check', 'rules', file)
  t.equal(checked.status, 0, checked.output)
  const variables = [...new Set(JSON.stringify(DASHBOARD.panels).match(/\$\w+/g))].sort()
  t.same(variables, Object.keys(GRAFANA_VARIABLES).sort(), 'every variable a query uses is one substituted here')
  t.same(DASHBOARD.templating.list.map((variable: any) => variable.name), ['datasource', 'instance'], 'a data source variable and an instance variable')
})
