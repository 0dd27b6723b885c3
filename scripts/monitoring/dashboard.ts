// The service's Grafana dashboard, made from the metrics docs/operating.md lists and the rules'
// recording rules (rules.ts); `npm run monitoring` writes it as JSON (generate.ts). Every query
// is checked as PromQL by promtool in npm test, and run against a real Prometheus scraping the
// service under load in the system test (test/deploy/prometheus.system.test.ts).

import { OBJECTIVES } from './rules.ts'

// Grafana's variable, written as Grafana spells it.
// eslint-disable-next-line no-template-curly-in-string
const DATASOURCE = { type: 'prometheus', uid: '${datasource}' }
/** The instances chosen in the dashboard's variable. */
const SERIES = 'job="plant-store", instance=~"$instance"'
const RANGE = '$__rate_interval'

interface Target { expr: string, legend: string }
interface Panel { title: string, description: string, unit: string, targets: Target[] }
interface Row { title: string, panels: Panel[] }

const rate = (metric: string, by: string, selector = SERIES): string => `sum by (${by}) (rate(${metric}{${selector}}[${RANGE}]))`
const quantiles = (histogram: string, by: string, label: string): Target[] => [0.5, 0.9, 0.99].map((q) => ({
  expr: `histogram_quantile(${q}, ${rate(`${histogram}_bucket`, by === '' ? 'le' : `${by}, le`)})`,
  legend: `p${q * 100}${label}`
}))
const burns = (record: string, objective: number): Target[] => ['1h', '6h', '3d'].map((window) => ({
  expr: `${record}${window}{job="plant-store"} / ${Number((1 - objective).toPrecision(6))}`,
  legend: `{{namespace}} ${window}`
}))

export const ROWS: Row[] = [
  {
    title: 'Service level',
    panels: [
      { title: 'Availability: error budget burn rate', unit: 'x', description: `How many times faster than the objective allows (${OBJECTIVES.availability * 100}% of API requests without a 5xx) the error budget is spent, over 1 h, 6 h and 3 days. 1 spends it in exactly 30 days; the alerts page at 14.4 (1 h) and 6 (6 h).`, targets: burns('plant_store:api_errors:ratio_rate', OBJECTIVES.availability) },
      { title: 'Latency: error budget burn rate', unit: 'x', description: `The same for latency: ${OBJECTIVES.latency * 100}% of API requests answered within ${OBJECTIVES.latencySeconds * 1000} ms.`, targets: burns('plant_store:api_slow:ratio_rate', OBJECTIVES.latency) },
      { title: 'Instances up', unit: 'none', description: 'Whether each instance answers its scrape (1) or not (0).', targets: [{ expr: `up{${SERIES}}`, legend: '{{instance}}' }] }
    ]
  },
  {
    title: 'Requests',
    panels: [
      { title: 'Requests by route and status', unit: 'reqps', description: 'Answered requests a second, rejections included; `unmatched` is every request no route matched.', targets: [{ expr: rate('http_request_duration_seconds_count', 'route, status_code'), legend: '{{route}} {{status_code}}' }] },
      {
        title: 'Errors (5xx) by route',
        unit: 'percentunit',
        description: 'The share of each route\'s answers that are 5xx; 0 while none is.',
        targets: [{ expr: `(${rate('http_request_duration_seconds_count', 'route', `${SERIES}, status_code=~"5.."`)} or 0 * ${rate('http_request_duration_seconds_count', 'route')}) / ${rate('http_request_duration_seconds_count', 'route')}`, legend: '{{route}}' }]
      },
      { title: 'Latency by route', unit: 's', description: 'Time to answer, by route: median, 90th and 99th percentiles.', targets: quantiles('http_request_duration_seconds', 'route', ' {{route}}') },
      { title: 'Answered 503, by reason', unit: 'reqps', description: 'Requests refused with 503 a second: store_busy (MAX_PENDING_CREATES reached), store_timeout, store_unavailable, overloaded (event-loop lag), keys_unavailable, shutting_down.', targets: [{ expr: rate('plant_store_unavailable_total', 'route, reason'), legend: '{{route}} {{reason}}' }] }
    ]
  },
  {
    title: 'Creates and the store',
    panels: [
      { title: 'Creates by outcome', unit: 'reqps', description: 'Answered creates a second: created (stored), replayed (the same plant again: client retries), conflict (409).', targets: [{ expr: rate('plant_store_creates_total', 'outcome'), legend: '{{outcome}}' }] },
      { title: 'Commit duration', unit: 's', description: 'Time per store commit, its durable flush included: the disk\'s or database\'s latency as the service feels it.', targets: quantiles('plant_store_commit_duration_seconds', 'instance', ' {{instance}}') },
      {
        title: 'Creates per commit',
        unit: 'none',
        description: 'Batch size of the group commit: grows with load; near 1 under load, the store is the limit.',
        targets: [
          { expr: `${rate('plant_store_batch_size_sum', 'instance')} / ${rate('plant_store_batch_size_count', 'instance')}`, legend: 'mean {{instance}}' },
          { expr: `histogram_quantile(0.99, ${rate('plant_store_batch_size_bucket', 'instance, le')})`, legend: 'p99 {{instance}}' }
        ]
      },
      {
        title: 'Creates waiting for a commit',
        unit: 'none',
        description: 'Creates queued or being committed, against MAX_PENDING_CREATES: past it, creates are refused with 503.',
        targets: [
          { expr: `plant_store_pending_creates{${SERIES}}`, legend: '{{instance}}' },
          { expr: `plant_store_pending_creates_limit{${SERIES}}`, legend: 'limit {{instance}}' }
        ]
      },
      { title: 'Create wait', unit: 's', description: 'Time from a create reaching the store to its commit answering it: a slow disk or database shows here first.', targets: quantiles('plant_store_create_wait_seconds', '', '') }
    ]
  },
  {
    title: 'Tokens',
    panels: [
      { title: 'Access tokens by outcome', unit: 'reqps', description: 'Access tokens from the identity provider judged a second: accepted, insufficient_scope (403), unavailable (503), or why one was refused (401).', targets: [{ expr: rate('plant_store_jwt_total', 'outcome'), legend: '{{outcome}}' }] },
      { title: 'Identity provider key fetches', unit: 'reqps', description: 'Fetches of the provider\'s discovery document and keys, by result.', targets: [{ expr: rate('plant_store_jwks_fetches_total', 'document, result'), legend: '{{document}} {{result}}' }] },
      { title: 'Rate limits counted in Redis', unit: 'none', description: 'With RATE_LIMIT_REDIS_URL: 1 while an instance counts the limits in Redis with every other, 0 while Redis does not answer it and it counts on its own.', targets: [{ expr: `plant_store_rate_limit_shared{${SERIES}}`, legend: '{{instance}}' }] },
      { title: 'API tokens file reloads', unit: 'none', description: 'With API_TOKENS_FILE: reloads of the file in the window, taken or refused (a refused file leaves the older tokens in force).', targets: [{ expr: `sum by (result) (increase(plant_store_api_tokens_reloads_total{${SERIES}}[${RANGE}]))`, legend: '{{result}}' }] }
    ]
  },
  {
    title: 'Process',
    panels: [
      {
        title: 'Event-loop lag',
        unit: 's',
        description: 'The event loop\'s lag since the last scrape, against MAX_EVENT_LOOP_DELAY_MS, past which API requests are shed.',
        targets: [
          { expr: `nodejs_eventloop_lag_p50_seconds{${SERIES}}`, legend: 'p50 {{instance}}' },
          { expr: `nodejs_eventloop_lag_p99_seconds{${SERIES}}`, legend: 'p99 {{instance}}' },
          { expr: `plant_store_event_loop_delay_limit_seconds{${SERIES}}`, legend: 'shed past {{instance}}' }
        ]
      },
      {
        title: 'Memory',
        unit: 'bytes',
        description: 'Resident memory against the limit the process is killed at, and the JavaScript heap.',
        targets: [
          { expr: `process_resident_memory_bytes{${SERIES}}`, legend: 'resident {{instance}}' },
          { expr: `plant_store_memory_limit_bytes{${SERIES}}`, legend: 'limit {{instance}}' },
          { expr: `nodejs_heap_size_used_bytes{${SERIES}}`, legend: 'heap used {{instance}}' },
          { expr: `nodejs_heap_size_total_bytes{${SERIES}}`, legend: 'heap {{instance}}' }
        ]
      },
      { title: 'Garbage collection', unit: 'percentunit', description: 'Share of time spent in GC pauses, by kind of collection.', targets: [{ expr: rate('nodejs_gc_duration_seconds_sum', 'instance, kind'), legend: '{{kind}} {{instance}}' }] },
      { title: 'CPU', unit: 'percentunit', description: 'CPU time a second (1 is one core).', targets: [{ expr: rate('process_cpu_seconds_total', 'instance'), legend: '{{instance}}' }] },
      { title: 'Spans lost', unit: 'none', description: 'With traces on: spans a second that never reached the collector, by reason (queue_full, or the export\'s error).', targets: [{ expr: rate('plant_store_trace_spans_lost_total', 'instance, reason'), legend: '{{reason}} {{instance}}' }] }
    ]
  }
]

const WIDTH = 24
const PANEL = { w: 8, h: 8 }

/** The dashboard as Grafana's JSON model: rows of panels three to a line, each querying the chosen data source. */
export function dashboard (): Record<string, unknown> {
  const panels: unknown[] = []
  let y = 0
  let id = 1
  for (const row of ROWS) {
    panels.push({ type: 'row', title: row.title, id: id++, collapsed: false, gridPos: { x: 0, y: y++, w: WIDTH, h: 1 }, panels: [] })
    row.panels.forEach((panel, i) => {
      panels.push({
        type: 'timeseries',
        title: panel.title,
        description: panel.description,
        id: id++,
        datasource: DATASOURCE,
        gridPos: { x: (i * PANEL.w) % WIDTH, y: y + Math.floor(i * PANEL.w / WIDTH) * PANEL.h, ...PANEL },
        fieldConfig: { defaults: { unit: panel.unit }, overrides: [] },
        options: { legend: { displayMode: 'list', placement: 'bottom' }, tooltip: { mode: 'multi', sort: 'desc' } },
        targets: panel.targets.map(({ expr, legend }, j) => ({ datasource: DATASOURCE, expr, legendFormat: legend, refId: String.fromCharCode(65 + j) }))
      })
    })
    y += Math.ceil(row.panels.length * PANEL.w / WIDTH) * PANEL.h
  }
  const instances = 'label_values(up{job="plant-store"}, instance)'
  return {
    title: 'Plant Store',
    uid: 'plant-store',
    description: 'Requests, the store, tokens and the process of every Plant Store instance (job="plant-store").',
    tags: ['plant-store'],
    schemaVersion: 39,
    version: 1,
    editable: true,
    graphTooltip: 1,
    time: { from: 'now-1h', to: 'now' },
    refresh: '30s',
    timezone: 'browser',
    templating: {
      list: [
        { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {}, hide: 0, options: [], refresh: 1, regex: '' },
        {
          name: 'instance',
          label: 'Instance',
          type: 'query',
          datasource: DATASOURCE,
          definition: instances,
          query: { query: instances, refId: 'instances' },
          refresh: 2,
          includeAll: true,
          multi: true,
          allValue: '.*',
          current: { selected: true, text: ['All'], value: ['$__all'] },
          options: [],
          sort: 1
        }
      ]
    },
    annotations: { list: [] },
    panels
  }
}
