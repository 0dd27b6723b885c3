import type { buildMock } from '../../src/cli/mock-app.ts'
import type { OpenApiDocument } from '../../src/openapi/document/document.ts'
import { placeIn, successJson, valueIn, type Resource } from '../../src/openapi/routes/resources.ts'
import type { Validators } from '../../src/openapi/schemas/validation.ts'
import { planner } from '../../src/openapi/verify/cases.ts'
import { createdKey, unwritten, writtenBy } from '../../src/openapi/verify/sequences.ts'
import { spelled } from '../../src/openapi/verify/spelling.ts'

// A client's first use of a stateful mock: a create of a resource, made as the verifier makes a
// valid request (verify/cases.ts), then a read of what it answered; whether the read answers what
// was written, as the verifier's read_after_write judges it (verify/sequences.ts). For the tests
// and npm run corpus:remembered.

export type Outcome = 'read back' | 'read differs' | 'read not answered 2xx' | 'create not answered 2xx' | 'no key in the create\'s answer' | 'no valid create could be made'
type Inject = Awaited<ReturnType<typeof buildMock>>['app']['inject']

/** A create of `resource` made as the verifier makes one, then a read of what it answered: the outcome, and what differed. */
export async function createThenRead (doc: OpenApiDocument, validators: Validators, inject: Inject, resource: Resource): Promise<{ outcome: Outcome, detail?: string }> {
  const create = resource.operations.create!
  const read = resource.operations.read!
  const plan = planner(doc, create, validators, {})
  const made = (() => { try { return plan.fixed().find((c) => c.kind === 'valid') } catch { return undefined } })()
  if (made === undefined) return { outcome: 'no valid create could be made' }
  const created = await inject({ method: create.method as 'POST', url: made.request.path, headers: made.request.headers, payload: made.request.body })
  if (created.statusCode < 200 || created.statusCode > 299) return { outcome: 'create not answered 2xx', detail: `${created.statusCode} ${created.body.slice(0, 120)}` }
  const answered = (() => { try { return created.json() } catch { return undefined } })()
  // What the create wrote, as the verifier has it: a form's fields as they arrive (an empty object
  // is none), and bytes and text hold no item's properties, whatever their schema says (Google
  // Storage's object upload, an object in application/octet-stream).
  const sent = writtenBy(doc, validators, made.values) as Record<string, unknown> | undefined
  // The key, as the verifier learns it.
  const key = createdKey(doc, resource, create, answered, created.headers.location?.toString(), sent)
  if (key === undefined) return { outcome: 'no key in the create\'s answer' }
  const parents = Object.fromEntries(plan.parameters.map((p, i) => [p.name, made.values.parameters[i]]).filter(([name]) => resource.parents.includes(name as string)))
  // Each spelled as the read's parameter says (a JSON one, `content`, as JSON text).
  const values: Record<string, unknown> = { ...parents, [resource.parameter]: key }
  const path = read.parameters.filter((p) => p.in === 'path').reduce((at, p) => at.replace(`{${p.name}}`, spelled(p, values[p.name], encodeURIComponent)), resource.item)
  // The read's credentials and required query, as the verifier would send them.
  const usual = (() => { try { return planner(doc, read, validators, {}).fixed()[0]?.request } catch { return undefined } })()
  const query = usual?.path.includes('?') === true ? usual.path.slice(usual.path.indexOf('?')) : ''
  const got = await inject({ method: 'GET', url: path + query, headers: usual?.headers ?? {} })
  if (got.statusCode < 200 || got.statusCode > 299) return { outcome: 'read not answered 2xx', detail: `GET ${path}: ${got.statusCode}` }
  const readMedia = successJson(read)?.media
  const readPlace = readMedia?.schema === undefined ? undefined : placeIn(doc, resource, readMedia.schema)
  if (readPlace === undefined || sent === null || typeof sent !== 'object') return { outcome: 'read back' }
  const readItem = valueIn(got.json(), readPlace.envelope)
  // As the verifier's read_after_write judges it.
  const differs = unwritten(doc, validators, readPlace.schema, resource.property, sent, readItem)
  return differs.length === 0 ? { outcome: 'read back' } : { outcome: 'read differs', detail: differs.join('; ') }
}
