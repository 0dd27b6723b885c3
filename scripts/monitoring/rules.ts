// The one source of the service's Prometheus rules: the objectives, the recording rules the
// burn-rate alerts read, and every alert with its threshold, severity and runbook. `npm run
// monitoring` writes them as a plain rule file and as a PrometheusRule (scripts/monitoring/generate.ts);
// `npm run check` fails when either differs from what this file makes. Test each alert in
// test/deploy/alerts/ (promtool test rules).
//
// Every rule selects job="plant-store" and keeps whatever else the scrape adds (instance, and
// namespace under Kubernetes), so it holds for the docs' static scrape config and for the
// ServiceMonitor alike; aggregations are by (namespace, job), and a label a scrape lacks is empty.

/** The objectives, over a rolling 30 days. Change them here, then `npm run monitoring`. */
export const OBJECTIVES = {
  /** Share of API requests answered without a 5xx. */
  availability: 0.999,
  /** Share of API requests answered within `latencySeconds` (one of http_request_duration_seconds' bucket bounds). */
  latency: 0.99,
  latencySeconds: 0.25
}

/** Where the runbook is: each alert links to its section. Point it at where your copy of the docs is served. */
export const RUNBOOK = 'docs/operating.md'

/** The cause alerts' thresholds. */
export const THRESHOLDS = {
  /** The 99th percentile of commits, in seconds: a healthy disk or database commits in milliseconds. */
  commitSeconds: 0.1,
  /** Share of MAX_PENDING_CREATES in use. */
  pendingShare: 0.8,
  /** Share of MAX_EVENT_LOOP_DELAY_MS the event loop's 99th-percentile lag reaches. */
  lagShare: 0.5,
  /** Share of the memory limit (RSS) and of V8's heap limit. */
  memoryShare: 0.9,
  /** Share of API requests answered 503 for one reason. */
  refusedShare: 0.01
}

const JOB = 'job="plant-store"'
// Every route the service answers, but what it serves beside the document: the probes, the docs
// and the document itself, and requests that matched no route.
const API = `${JOB}, route!~"/healthz|/readyz|/docs.*|/openapi[.].+|unmatched"`
const BY = 'namespace, job'
// The service an alert is about, in its description: its job, and its namespace when it has one.
const SERVICE = '{{ $labels.job }}{{ with $labels.namespace }} in {{ . }}{{ end }}'
const INSTANCE = `{{ $labels.instance }} of ${SERVICE}`

// The multiwindow, multi-burn-rate alerts of the Google SRE workbook (chapter 5) for a 30-day
// objective: each spends the share of the budget in its long window, confirmed by a short
// window that lets it resolve soon after the burn stops.
const BURNS = [
  { factor: 14.4, long: '1h', short: '5m', for: '2m', severity: 'critical' },
  { factor: 6, long: '6h', short: '30m', for: '15m', severity: 'critical' },
  { factor: 3, long: '1d', short: '2h', for: '1h', severity: 'warning' },
  { factor: 1, long: '3d', short: '6h', for: '3h', severity: 'warning' }
]
const WINDOWS = [...new Set(BURNS.flatMap(({ long, short }) => [short, long]))]

export interface Rule {
  record?: string
  alert?: string
  expr: string
  for?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
}
export interface RuleGroup { name: string, interval?: string, rules: Rule[] }

/** A ratio that is 0, not absent, while its part has no series yet (no 5xx answered so far). */
const ratio = (part: string, whole: string): string => `(${part} or 0 * ${whole}) / ${whole}`
const rate = (selector: string, window: string): string => `sum by (${BY}) (rate(${selector}[${window}]))`

const SLIS = {
  availability: {
    record: (window: string) => `plant_store:api_errors:ratio_rate${window}`,
    expr: (window: string) => ratio(rate(`http_request_duration_seconds_count{${API}, status_code=~"5.."}`, window), rate(`http_request_duration_seconds_count{${API}}`, window)),
    objective: OBJECTIVES.availability,
    alert: 'PlantStoreErrorBudgetBurn',
    what: 'answered with a 5xx'
  },
  latency: {
    record: (window: string) => `plant_store:api_slow:ratio_rate${window}`,
    expr: (window: string) => `1 - ${rate(`http_request_duration_seconds_bucket{${API}, le="${OBJECTIVES.latencySeconds}"}`, window)} / ${rate(`http_request_duration_seconds_count{${API}}`, window)}`,
    objective: OBJECTIVES.latency,
    alert: 'PlantStoreLatencyBudgetBurn',
    what: `slower than ${OBJECTIVES.latencySeconds * 1000} ms`
  }
}

const percent = (share: number): string => `${Number((share * 100).toPrecision(6))}%`
const runbook = (alert: string): string => `${RUNBOOK}#${alert.toLowerCase()}`

function burnAlerts ({ record, objective, alert, what }: typeof SLIS[keyof typeof SLIS]): Rule[] {
  const budget = Number((1 - objective).toPrecision(6))
  return BURNS.map(({ factor, long, short, for: wait, severity }) => ({
    alert,
    expr: `${record(long)} > ${factor} * ${budget}\nand\n${record(short)} > ${factor} * ${budget}`,
    for: wait,
    labels: { severity, long, short },
    annotations: {
      summary: `Plant Store is spending its error budget ${factor} times too fast.`,
      description: `{{ $value | humanizePercentage }} of the API requests to ${SERVICE} were ${what} over the last ${long} (and still over ${short}); the objective allows ${percent(budget)} (${percent(objective)} over 30 days). At ${factor} times the allowed rate, the month's budget lasts ${Number((30 / factor).toPrecision(2))} days.`,
      runbook_url: runbook(alert)
    }
  }))
}

/** A cause alert: its rule, with a summary, a description and the runbook. */
function alert (name: string, expr: string, wait: string, severity: string, summary: string, description: string): Rule {
  return { alert: name, expr, for: wait, labels: { severity }, annotations: { summary, description, runbook_url: runbook(name) } }
}

/** The share of API requests answered 503 for each of `reasons`, by reason. */
const refused = (reasons: string): string =>
  `sum by (${BY}, reason) (rate(plant_store_unavailable_total{${API}, reason=~"${reasons}"}[5m]))\n/ on (${BY}) group_left\n${rate(`http_request_duration_seconds_count{${API}}`, '5m')}`

export const RULE_GROUPS: RuleGroup[] = [
  {
    // The burn-rate alerts in the group of the ratios they read: a group's rules run in order,
    // so each alert reads the ratios of its own evaluation, not the one before.
    name: 'plant-store.slo',
    rules: [
      ...Object.values(SLIS).flatMap(({ record, expr }) => WINDOWS.map((window) => ({ record: record(window), expr: expr(window) }))),
      ...burnAlerts(SLIS.availability),
      ...burnAlerts(SLIS.latency)
    ]
  },
  {
    name: 'plant-store.causes',
    rules: [
      alert('PlantStoreDown', `count by (${BY}) (up{${JOB}} == 0) == count by (${BY}) (up{${JOB}})`, '1m', 'critical',
        'No Plant Store instance answers its scrape.',
        `All {{ $value }} targets of ${SERVICE} have failed their scrapes for a minute: no instance is serving.`),
      alert('PlantStoreNotScraped', `absent(up{${JOB}})`, '10m', 'critical',
        'Prometheus finds no Plant Store to scrape.',
        'Prometheus has had no target with job="plant-store" for 10 minutes: nothing runs, or the scrape config (or the ServiceMonitor) no longer finds it. Neither an outage nor the SLOs can be seen.'),
      alert('PlantStoreInstanceDown', `up{${JOB}} == 0`, '5m', 'warning',
        'A Plant Store instance does not answer its scrape.',
        `${INSTANCE} has not answered its scrape for 5 minutes.`),
      alert('PlantStoreStoreRefusing', `${refused('store_busy|store_timeout|store_unavailable')} > ${THRESHOLDS.refusedShare}`, '5m', 'warning',
        'Creates are refused because the store is slow, stuck or unreachable.',
        `{{ $value | humanizePercentage }} of the API requests to ${SERVICE} were answered 503 for {{ $labels.reason }} over the last 5 minutes (the threshold is ${percent(THRESHOLDS.refusedShare)}).`),
      alert('PlantStoreOverloaded', `${refused('overloaded')} > ${THRESHOLDS.refusedShare}`, '5m', 'warning',
        'API requests are shed because the event loop lags.',
        `{{ $value | humanizePercentage }} of the API requests to ${SERVICE} were shed with 503 over the last 5 minutes: the event loop lagged past MAX_EVENT_LOOP_DELAY_MS (the threshold is ${percent(THRESHOLDS.refusedShare)}).`),
      alert('PlantStoreCommitsSlow', `histogram_quantile(0.99, sum by (${BY}, instance, le) (rate(plant_store_commit_duration_seconds_bucket{${JOB}}[5m]))) > ${THRESHOLDS.commitSeconds}`, '10m', 'warning',
        'Store commits are slow.',
        `The 99th percentile of the commits of ${INSTANCE} took {{ $value | humanizeDuration }} over the last 5 minutes (the threshold is ${THRESHOLDS.commitSeconds * 1000} ms): its disk or database is slow.`),
      alert('PlantStorePendingCreatesNearLimit', `max_over_time(plant_store_pending_creates{${JOB}}[5m]) / plant_store_pending_creates_limit{${JOB}} > ${THRESHOLDS.pendingShare}`, '5m', 'warning',
        'Creates waiting for a commit near MAX_PENDING_CREATES.',
        `Up to {{ $value | humanizePercentage }} of the MAX_PENDING_CREATES of ${INSTANCE} were waiting for a commit over the last 5 minutes (the threshold is ${percent(THRESHOLDS.pendingShare)}); past it, creates are refused with 503.`),
      alert('PlantStoreKeyFetchesFailing', `sum by (${BY}, instance) (increase(plant_store_jwks_fetches_total{${JOB}, result="failed"}[5m])) > 0`, '5m', 'warning',
        'The identity provider\'s keys cannot be fetched.',
        `${INSTANCE} failed {{ $value | humanize }} fetches of the identity provider's discovery document or keys over the last 5 minutes; access tokens signed with a key it does not hold yet are answered 503.`),
      alert('PlantStoreRateLimitNotShared', `count by (${BY}) (plant_store_rate_limit_shared{${JOB}} == 0)`, '5m', 'warning',
        'Instances count the rate limits on their own: Redis does not answer them.',
        `{{ $value }} instance(s) of ${SERVICE} have counted the rate limits in their own memory for 5 minutes, since Redis (RATE_LIMIT_REDIS_URL) stopped answering them: a token may make its limit on each of them, not on all together.`),
      alert('PlantStoreTokensFileRefused', `count by (${BY}) (plant_store_api_tokens_file_refused{${JOB}} == 1)`, '5m', 'warning',
        'Instances refuse their API tokens file and keep older tokens.',
        `{{ $value }} instance(s) of ${SERVICE} have refused API_TOKENS_FILE for 5 minutes (it failed the checks: see their log); they still accept the tokens of the last file they took, and not the new ones.`),
      alert('PlantStoreSpansLost', `sum by (${BY}, instance) (increase(plant_store_trace_spans_lost_total{${JOB}}[5m])) > 0`, '10m', 'warning',
        'Spans do not reach the trace collector.',
        `${INSTANCE} lost {{ $value | humanize }} spans over the last 5 minutes: the collector is down, slow, or refuses them.`),
      alert('PlantStoreMemoryNearLimit', `process_resident_memory_bytes{${JOB}} / plant_store_memory_limit_bytes{${JOB}} > ${THRESHOLDS.memoryShare}`, '5m', 'warning',
        'An instance\'s memory is near its limit.',
        `${INSTANCE} holds {{ $value | humanizePercentage }} of its memory limit (the threshold is ${percent(THRESHOLDS.memoryShare)}); at the limit the kernel kills it.`),
      alert('PlantStoreHeapNearLimit', `nodejs_heap_size_used_bytes{${JOB}} / plant_store_heap_limit_bytes{${JOB}} > ${THRESHOLDS.memoryShare}`, '5m', 'warning',
        'An instance\'s JavaScript heap is near V8\'s limit.',
        `${INSTANCE} uses {{ $value | humanizePercentage }} of V8's heap limit (the threshold is ${percent(THRESHOLDS.memoryShare)}); at the limit it aborts.`),
      alert('PlantStoreEventLoopLagging', `nodejs_eventloop_lag_p99_seconds{${JOB}} / (plant_store_event_loop_delay_limit_seconds{${JOB}} > 0) > ${THRESHOLDS.lagShare}`, '5m', 'warning',
        'An instance\'s event loop lags near where it sheds load.',
        `The event-loop lag (99th percentile) of ${INSTANCE} is {{ $value | humanizePercentage }} of MAX_EVENT_LOOP_DELAY_MS (the threshold is ${percent(THRESHOLDS.lagShare)}); past it, API requests are shed with 503.`)
    ]
  }
]
