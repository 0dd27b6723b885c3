import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import jsonPatch from 'fast-json-patch'
import t from 'tap'
import { parseAllDocuments } from 'yaml'
import { SECTIONS } from '../../src/config.ts'
import { fileOf } from '../../src/config/load.ts'

// deploy/kubernetes, checked offline as an API server would take it: each kustomization built
// (its resources, JSON patches and labels; a field this build does not know fails the test), each
// object validated against the Kubernetes schemas (kubernetes-models), every pod held to the
// restricted Pod Security profile and to what the image needs, every variable one the service reads.

const root = fileURLToPath(new URL('../../deploy/kubernetes/', import.meta.url))
type K8sObject = { apiVersion: string, kind: string, metadata: { name: string, labels?: Record<string, string> }, spec?: any }

// As kubectl reads YAML (1.1): 0440 is octal.
const parse = (file: string): any[] => parseAllDocuments(readFileSync(file, 'utf8'), { version: '1.1' }).map((document) => document.toJS())

const KNOWN = new Set(['apiVersion', 'kind', 'resources', 'components', 'patches', 'labels'])
const COMPONENT = 'components/monitoring'
const SHARED_LIMITS = 'components/shared-rate-limits'

/**
 * The objects `kustomize build DIR` makes, for the fields these kustomizations use; `components` are
 * added as its own `components:` would add them. A Component is built onto the objects of the
 * kustomization that names it (`onto`): its resources join them, then its patches apply to them all.
 */
function build (dir: string, components: string[] = [], onto: K8sObject[] = []): K8sObject[] {
  const [kustomization] = parse(join(dir, 'kustomization.yaml'))
  const unknown = Object.keys(kustomization).filter((key) => !KNOWN.has(key))
  if (unknown.length > 0) throw new Error(`${relative(root, dir)}/kustomization.yaml uses ${unknown.join(', ')}, which this test does not build`)
  let objects: K8sObject[] = [...onto, ...kustomization.resources.flatMap((resource: string) => {
    const path = join(dir, resource)
    return statSync(path).isDirectory() ? build(path) : parse(path)
  })]
  // A Component's objects join the kustomization's before its patches and labels apply.
  for (const component of [...kustomization.components ?? [], ...components]) objects = build(join(dir, component), [], objects)
  for (const { path, target } of kustomization.patches ?? []) {
    const [operations] = parse(join(dir, path))
    const matched = objects.filter((object) => object.kind === target.kind && object.metadata.name === target.name)
    if (matched.length !== 1) throw new Error(`${relative(root, dir)}: the patch ${path} matches ${matched.length} objects`)
    objects = objects.map((object) => matched.includes(object) ? jsonPatch.applyPatch(structuredClone(object), operations, true).newDocument : object)
  }
  for (const { pairs } of kustomization.labels ?? []) {
    objects = objects.map((object) => ({ ...object, metadata: { ...object.metadata, labels: { ...object.metadata.labels, ...pairs } } }))
  }
  return objects
}

/** Every folder under deploy/kubernetes with a kustomization to build (a Component is built into one). */
const kustomizations = (dir = root): string[] => [
  ...(existsSync(join(dir, 'kustomization.yaml')) && parse(join(dir, 'kustomization.yaml'))[0].kind !== 'Component' ? [dir] : []),
  ...readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).flatMap((entry) => kustomizations(join(dir, entry.name)))
]

/** The kubernetes-models class of an object's apiVersion and kind (the Prometheus Operator's from its own package). */
async function modelOf ({ apiVersion, kind }: K8sObject): Promise<new (data: unknown) => { validate: () => void }> {
  const module = await import(apiVersion.startsWith('monitoring.coreos.com/') ? `@kubernetes-models/prometheus-operator/${apiVersion}/${kind}` : `kubernetes-models/${apiVersion}/${kind}`)
  return module[kind]
}

const builds: Record<string, K8sObject[]> = Object.fromEntries([
  ...kustomizations().map((dir) => [relative(root, dir) || '.', build(dir)]),
  // The optional component, as an operator adds it to either overlay.
  ...['overlays/sqlite', 'overlays/postgres'].map((overlay) => [`${overlay} + ${COMPONENT}`, build(join(root, overlay), [`../../${COMPONENT}`])]),
  // Several replicas' one limit, as an operator adds it to the PostgreSQL overlay.
  [`overlays/postgres + ${SHARED_LIMITS}`, build(join(root, 'overlays/postgres'), [`../../${SHARED_LIMITS}`])]
])
/** The Plant Store's own pods (the API's and the migration's), not what a component runs beside them. */
const ours = (object: K8sObject): boolean => object.spec?.template?.spec.containers[0].name === 'plant-store'
const declared = new Set(Object.values(SECTIONS).flatMap(({ variables, secrets = [] }) => [...Object.keys(variables), ...secrets.map(fileOf)]))

t.test('every kustomization builds, and every object is valid against the Kubernetes schemas', async (t) => {
  t.same(Object.keys(builds).sort(), ['base', 'overlays/postgres', `overlays/postgres + ${COMPONENT}`, `overlays/postgres + ${SHARED_LIMITS}`, 'overlays/postgres/migrate', 'overlays/sqlite', `overlays/sqlite + ${COMPONENT}`])
  for (const [name, objects] of Object.entries(builds)) {
    for (const object of objects) {
      const Model = await modelOf(object)
      t.doesNotThrow(() => new Model(object).validate(), `${name}: ${object.kind} ${object.metadata.name}`)
      t.equal(object.metadata.labels?.['app.kubernetes.io/name'], 'plant-store', `${name}: ${object.kind} is labelled`)
    }
  }
  const Model = await modelOf({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' } })
  t.throws(() => new Model({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' }, spec: { replicas: 'three' } }).validate(), 'a wrong field fails (the check can fail)')
})

t.test('every pod: the restricted Pod Security profile, a read-only root, no service account token, the image\'s user', async (t) => {
  for (const [name, objects] of Object.entries(builds)) {
    for (const object of objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job')) {
      const pod = object.spec.template.spec
      const where = `${name}: ${object.kind} ${object.metadata.name}`
      t.match(pod.securityContext, { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } }, `${where}: the pod`)
      t.equal(pod.automountServiceAccountToken, false, `${where}: no service account token`)
      t.notOk(pod.hostNetwork || pod.hostPID || pod.hostIPC, `${where}: no host namespaces`)
      for (const container of pod.containers) {
        t.match(container.securityContext, { runAsNonRoot: true, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } }, `${where}: ${container.name}`)
        t.notOk(container.securityContext.capabilities.add, `${where}: no capability added`)
        t.ok(container.resources?.requests?.memory && container.resources?.limits?.memory, `${where}: resources`)
        t.ok(container.volumeMounts.some((mount: any) => mount.mountPath === '/tmp'), `${where}: a writable /tmp`)
        if (ours(object)) for (const { name: variable } of container.env ?? []) t.ok(declared.has(variable), `${where}: ${variable} is a variable the service reads`)
      }
      for (const volume of pod.volumes.filter((v: any) => v.secret !== undefined)) {
        t.equal(volume.secret.defaultMode, 0o440, `${where}: the Secret ${volume.secret.secretName} is readable by the pod's group only`)
        // A Secret mounted by subPath is never updated: a rotation would not reach the pod.
        const mounts = pod.containers.flatMap((container: any) => container.volumeMounts.filter((mount: any) => mount.name === volume.name))
        t.ok(mounts.length > 0 && mounts.every((mount: any) => mount.subPath === undefined), `${where}: the Secret ${volume.secret.secretName} is mounted whole, as Kubernetes updates it`)
      }
      for (const volume of pod.volumes) t.notOk(volume.hostPath, `${where}: no hostPath`)
    }
  }
})

t.test('the service: probes, a drain that fits in the grace period, tokens from a Secret, each store as it must run', async (t) => {
  const deployment = (name: string) => builds[name].find((o) => o.kind === 'Deployment')!
  for (const name of ['overlays/sqlite', 'overlays/postgres']) {
    const pod = deployment(name).spec.template.spec
    const [container] = pod.containers
    const env = Object.fromEntries(container.env.map(({ name, value }: { name: string, value: string }) => [name, value]))
    t.match(container.startupProbe, { httpGet: { path: '/healthz', port: 'http' } }, `${name}: a startup probe`)
    t.match(container.readinessProbe, { httpGet: { path: '/readyz', port: 'http' } }, `${name}: readiness on /readyz`)
    t.match(container.livenessProbe, { httpGet: { path: '/healthz', port: 'http' } }, `${name}: liveness on /healthz`)
    const preStop = container.lifecycle.preStop.sleep.seconds
    t.ok(pod.terminationGracePeriodSeconds > preStop + Number(env.SHUTDOWN_TIMEOUT_MS) / 1000, `${name}: the grace period (${pod.terminationGracePeriodSeconds} s) outlasts the preStop pause and the drain`)
    t.equal(container.ports.find((p: any) => p.name === 'http').containerPort, 3000, `${name}: the image's port`)
    t.equal(container.ports.find((p: any) => p.name === 'metrics').containerPort, Number(env.METRICS_PORT), `${name}: metrics on their own port`)
    const tokens = container.volumeMounts.find((m: any) => env.API_TOKENS_FILE.startsWith(`${m.mountPath}/`))
    t.ok(pod.volumes.find((v: any) => v.name === tokens?.name)?.secret, `${name}: API_TOKENS_FILE is a Secret's file`)
    t.equal(container.volumeMounts.find((m: any) => m.name === 'data')?.mountPath, '/var/lib/plant-store', `${name}: the data volume where the image keeps its store`)
  }
  const sqlite = deployment('overlays/sqlite')
  t.match(sqlite.spec, { replicas: 1, strategy: { type: 'Recreate' } }, 'SQLite: one replica, never two at once')
  t.same(sqlite.spec.template.spec.volumes.find((v: any) => v.name === 'data').persistentVolumeClaim, { claimName: 'plant-store-data' })
  t.ok(builds['overlays/sqlite'].find((o) => o.kind === 'PersistentVolumeClaim' && o.metadata.name === 'plant-store-data'), 'and its claim')
  const postgres = deployment('overlays/postgres')
  t.ok(postgres.spec.replicas >= 2, 'PostgreSQL: several replicas')
  t.match(postgres.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0 } }, 'updated one at a time, none taken out first')
  t.ok(postgres.spec.template.spec.containers[0].env.some((e: any) => e.name === 'DATABASE_URL_FILE'), 'its URL from a Secret\'s file')
  const [job] = builds['overlays/postgres/migrate']
  t.match(job, { kind: 'Job', spec: { template: { spec: { restartPolicy: 'Never', containers: [{ args: ['migrate'] }] } } } }, 'the migration, as a Job of the same image')
  t.ok(job.spec.template.spec.containers[0].env.some((e: any) => e.name === 'MIGRATE_DATABASE_URL_FILE'), 'as the owner, from a Secret\'s file')
  t.ok(job.spec.activeDeadlineSeconds > 0, 'bounded')
  const service = builds.base.find((o) => o.kind === 'Service')!
  t.same(service.spec.ports.map((p: any) => p.targetPort).sort(), ['http', 'metrics'], 'the Service: API and metrics')
  t.ok(builds.base.find((o) => o.kind === 'PodDisruptionBudget'), 'a disruption budget')
})

t.test('the Deployment runs the image this project builds', async (t) => {
  const containerfile = readFileSync(join(dirname(root), 'Containerfile'), 'utf8')
  t.match(containerfile, /^EXPOSE 3000$/m)
  t.match(containerfile, /^USER 65532:65532$/m)
  for (const [name, objects] of Object.entries(builds)) {
    for (const object of objects.filter(ours)) t.equal(object.spec.template.spec.containers[0].image, 'localhost/plant-store:latest', `${name}: ${object.kind}`)
  }
})

t.test('the monitoring component: a ServiceMonitor that scrapes the Service\'s metrics as job plant-store, and the rules', async (t) => {
  for (const overlay of ['overlays/sqlite', 'overlays/postgres']) {
    const objects = builds[`${overlay} + ${COMPONENT}`]
    const where = `${overlay} with ${COMPONENT}`
    t.same(objects.filter((o) => !builds[overlay].some((p) => p.kind === o.kind && p.metadata.name === o.metadata.name)).map((o) => o.kind).sort(), ['PrometheusRule', 'ServiceMonitor'], `${where}: adds a ServiceMonitor and a PrometheusRule`)
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor')!
    const service = objects.find((o) => o.kind === 'Service')!
    for (const [label, value] of Object.entries<string>(monitor.spec.selector.matchLabels)) t.equal(service.metadata.labels?.[label], value, `${where}: the ServiceMonitor selects the Service (${label})`)
    t.equal(service.metadata.labels?.[monitor.spec.jobLabel], 'plant-store', `${where}: its job label is plant-store, the job the rules select`)
    const [endpoint] = monitor.spec.endpoints
    t.ok(service.spec.ports.some((port: any) => port.name === endpoint.port && port.targetPort === 'metrics'), `${where}: it scrapes the Service's metrics port`)
    t.equal(endpoint.path, '/metrics')
  }
})

t.test('the shared rate limits component: Valkey beside the replicas, reachable from them alone, and the replicas counting in it', async (t) => {
  const objects = builds[`overlays/postgres + ${SHARED_LIMITS}`]
  const added = objects.filter((o) => !builds['overlays/postgres'].some((p) => p.kind === o.kind && p.metadata.name === o.metadata.name))
  t.same(added.map((o) => `${o.kind} ${o.metadata.name}`).sort(), ['Deployment plant-store-valkey', 'NetworkPolicy plant-store-valkey', 'Service plant-store-valkey'])
  const valkey = added.find((o) => o.kind === 'Deployment')!
  const [container] = valkey.spec.template.spec.containers
  t.ok(container.readinessProbe && container.livenessProbe, 'Valkey has probes')
  t.match(container.args, ['/etc/valkey/valkey.conf'], 'its password from the Secret\'s file, not its arguments')
  const podLabels = valkey.spec.template.metadata.labels
  const selects = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([key, value]) => labels[key] === value)
  const [api, service, policy] = [objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'plant-store')!, added.find((o) => o.kind === 'Service')!, added.find((o) => o.kind === 'NetworkPolicy')!]
  const apiLabels = api.spec.template.metadata.labels
  t.ok(selects(service.spec.selector, podLabels) && !selects(service.spec.selector, apiLabels), 'its Service selects Valkey, not the API')
  const apiService = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'plant-store')!
  t.notOk(selects(apiService.spec.selector, podLabels), 'the API\'s Service does not select Valkey')
  t.ok(selects(policy.spec.podSelector.matchLabels, podLabels), 'the NetworkPolicy guards Valkey')
  t.same(policy.spec.policyTypes, ['Ingress', 'Egress'])
  t.equal(policy.spec.ingress.length, 1, 'one way in')
  t.ok(selects(policy.spec.ingress[0].from[0].podSelector.matchLabels, apiLabels) && !selects(policy.spec.ingress[0].from[0].podSelector.matchLabels, podLabels), 'from the API\'s pods only')
  t.same(policy.spec.ingress[0].ports, [{ protocol: 'TCP', port: 6379 }])
  t.same(policy.spec.egress, [], 'and none out')
  const env = Object.fromEntries(api.spec.template.spec.containers[0].env.map(({ name, value }: { name: string, value: string }) => [name, value]))
  t.ok(Number(env.RATE_LIMIT_PER_MINUTE) > 0, 'the replicas have a limit')
  const mount = api.spec.template.spec.containers[0].volumeMounts.find((m: any) => env.RATE_LIMIT_REDIS_URL_FILE?.startsWith(`${m.mountPath}/`))
  t.equal(api.spec.template.spec.volumes.find((v: any) => v.name === mount?.name)?.secret?.secretName, 'plant-store-valkey', 'and count in Valkey, its URL a Secret\'s file')
})
