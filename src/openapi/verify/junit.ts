import type { Report } from './report.ts'

// A report as JUnit XML, which CI systems read: the document a test suite, each operation a test
// case, each violation a failure of it, with the curl command that shows it (a sequence's, each
// of its requests in order). The proxy's: each operation its traffic did not reach, a skipped case.

const escaped = (text: string): string => text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)
  // XML 1.0 takes no control character but tab, newline and carriage return.
  .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '') // eslint-disable-line no-control-regex

export function junitOf (report: Report): string {
  const failures = report.operations.filter((o) => o.violations.length > 0).length
  const seconds = (report.durationMs / 1000).toFixed(3)
  const cases = report.operations.map((o) => {
    const name = escaped(`${o.method} ${o.path} (${o.operationId})`)
    const shown = (v: Report['operations'][number]['violations'][number]) => v.steps === undefined ? v.curl : v.steps.map((s, i) => `${i + 1}. ${s.step}: ${s.request} → ${s.status ?? 'no answer'}\n${s.curl}`).join('\n')
    const failed = o.violations.map((v) => `      <failure type="${escaped(v.check)}" message="${escaped(`${v.check}: ${v.detail}`)}">${escaped(shown(v))}</failure>`)
    const notes = o.notes.length === 0 ? [] : [`      <system-out>${escaped(o.notes.join('\n'))}</system-out>`]
    const body = [...failed, ...notes]
    return body.length === 0 ? `    <testcase classname="${escaped(report.document)}" name="${name}"/>` : `    <testcase classname="${escaped(report.document)}" name="${name}">\n${body.join('\n')}\n    </testcase>`
  })
  const unseen = (report.coverage?.unseen ?? []).map((operation) => `    <testcase classname="${escaped(report.document)}" name="${escaped(operation)}">\n      <skipped message="not reached by the traffic"/>\n    </testcase>`)
  const tests = cases.length + unseen.length
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${report.coverage === undefined ? 'npm run verify' : 'npm run proxy'}" tests="${tests}" failures="${failures}" time="${seconds}">`,
    `  <testsuite name="${escaped(`${report.document} against ${report.baseUrl}`)}" tests="${tests}" failures="${failures}" errors="0" skipped="${unseen.length}" time="${seconds}">`,
    ...report.seed === undefined ? [] : [`    <properties><property name="seed" value="${report.seed}"/></properties>`],
    ...cases,
    ...unseen,
    '  </testsuite>',
    '</testsuites>',
    ''
  ].join('\n')
}
