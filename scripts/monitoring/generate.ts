// npm run monitoring: writes the Prometheus rules (rules.ts) as a plain rule file and as the
// Prometheus Operator's PrometheusRule, and the Grafana dashboard (dashboard.ts) as JSON. With
// --check (in npm run check) it writes nothing, and fails naming each file that is out of date.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { stringify } from 'yaml'
import { dashboard } from './dashboard.ts'
import { RULE_GROUPS } from './rules.ts'

const header = (source: string) => `# DO NOT EDIT. Generated from ${source} by \`npm run monitoring\`.\n`
const yaml = (value: unknown) => stringify(value, { lineWidth: 0 })

const FILES: Record<string, string> = {
  'deploy/monitoring/rules.yaml': header('scripts/monitoring/rules.ts') + yaml({ groups: RULE_GROUPS }),
  'deploy/kubernetes/components/monitoring/prometheus-rule.yaml': header('scripts/monitoring/rules.ts') + yaml({
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'plant-store', labels: { 'app.kubernetes.io/name': 'plant-store', 'app.kubernetes.io/part-of': 'plant-store' } },
    spec: { groups: RULE_GROUPS }
  }),
  'deploy/monitoring/dashboard.json': `${JSON.stringify(dashboard(), null, 2)}\n`
}

const check = process.argv.includes('--check')
for (const [file, text] of Object.entries(FILES)) {
  if (!check) {
    writeFileSync(file, text)
    console.log(`wrote ${file}`)
  } else if (!existsSync(file) || readFileSync(file, 'utf8') !== text) {
    console.error(`${file} is out of date with scripts/monitoring/: run \`npm run monitoring\` and commit it.`)
    process.exitCode = 1
  } else {
    console.log(`${file} is up to date`)
  }
}
