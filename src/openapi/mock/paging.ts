import type { OpenApiDocument } from '../document/document.ts'
import { propertiesOf, requiredIn } from '../routes/resources.ts'
import type { ParameterSpec, RouteSpec } from '../routes/routes.ts'
import { derefSchema, type JsonSchema } from '../schemas/schema.ts'

// A remembered list answered a page at a time, as its query asks, with an envelope that says
// truly whether more follows: a client that follows the pages (an SDK's auto-pagination, a loop
// until `next` is null or `has_more` false) gets each item once, and stops. Only the names below,
// as APIs commonly spell them (case, `_`, `-` and `$` aside), are read: a page size (`limit`,
// `per_page`, `maxResults`…), and where the page starts, by one of an offset (`offset`, `skip`),
// a page number (`page`) or a cursor (`cursor`, `starting_after`, `pageToken`…); in the answer, a
// flag of more (`has_more`…) and what names the next page (`next`, `next_cursor`,
// `nextPageToken`…). A cursor the mock gives is the key of a page's last item.

const names = (...spelled: string[]) => new Set(spelled)
const SIZES = names('limit', 'perpage', 'pagesize', 'size', 'max', 'maxresults', 'maxitems', 'top', 'first', 'count')
const OFFSETS = names('offset', 'skip', 'start', 'startindex')
const PAGES = names('page', 'pagenumber', 'pageno', 'pagenum', 'pageindex')
const CURSORS = names('cursor', 'after', 'startingafter', 'pagetoken', 'nexttoken', 'continuationtoken', 'continuation', 'marker', 'pagecursor', 'skiptoken')
const MORE = names('hasmore', 'more', 'hasnext', 'hasnextpage', 'moreresults')
const NEXT = names('next', 'nextcursor', 'nextpagetoken', 'nexttoken', 'nextpage', 'nextmarker', 'continuationtoken', 'nexturl', 'nextlink', 'odatanextlink', 'nextpageurl', 'nexthref')

const plain = (name: string): string => name.toLowerCase().replace(/[-_$@.]/g, '')

/** How a list operation's query pages it; undefined where it declares no page size nor start. */
export interface Paging {
  size?: ParameterSpec
  start?: { parameter: ParameterSpec, by: 'offset' | 'page' | 'cursor', first: number }
}

// Found once per operation: a list asks it on every request.
const pagings = new WeakMap<RouteSpec, Paging | undefined>()

export function pagingOf (route: RouteSpec): Paging | undefined {
  if (!pagings.has(route)) pagings.set(route, pagingIn(route))
  return pagings.get(route)
}

function pagingIn (route: RouteSpec): Paging | undefined {
  const query = route.parameters.filter((parameter) => parameter.in === 'query')
  // A time is a filter, not a place in the list (`after=2026-01-01`).
  const find = (set: Set<string>) => query.find((parameter) => set.has(plain(parameter.name)) && !/^date/.test(String(parameter.schema.format)))
  const size = find(SIZES)
  const by = ([['offset', OFFSETS], ['page', PAGES], ['cursor', CURSORS]] as const).map(([by, set]) => ({ by, parameter: find(set) })).find(({ parameter }) => parameter !== undefined)
  if (size === undefined && by === undefined) return undefined
  // A page number counts from 1, unless its schema lets it be 0.
  const first = by?.by === 'page' && ![by.parameter!.schema.minimum, by.parameter!.schema.default].includes(0) ? 1 : 0
  return { size, ...(by !== undefined && { start: { parameter: by.parameter!, by: by.by, first } }) }
}

/** The page a query asks of `keys` (the items' keys, in order): its bounds, and the query values of the next, if there is one. */
export function pageOf (paging: Paging, query: Record<string, unknown>, keys: string[], max: number): { from: number, to: number, next?: Record<string, string | number> } {
  const asked = (parameter: ParameterSpec | undefined) => parameter === undefined ? undefined : query[parameter.name] ?? parameter.schema.default
  const sizeAsked = asked(paging.size)
  const size = Math.min(typeof sizeAsked === 'number' && sizeAsked >= 0 ? sizeAsked : Infinity, max)
  const { start } = paging
  const at = asked(start?.parameter)
  let from = 0
  if (start !== undefined && at !== undefined) {
    if (start.by === 'cursor') {
      // After the item it names; a cursor that names none begins nothing.
      const index = keys.indexOf(String(at))
      from = index === -1 ? keys.length : index + 1
    } else if (typeof at === 'number') {
      // Without a size, the first page holds them all.
      from = start.by === 'offset' ? at : at === start.first ? 0 : (at - start.first) * size
    }
  }
  from = Math.max(0, Math.min(keys.length, Number.isFinite(from) ? from : keys.length))
  const to = Math.min(keys.length, from + size)
  if (to >= keys.length || start === undefined || to === from) return { from, to }
  const value = start.by === 'cursor' ? keys[to - 1] : start.by === 'offset' ? to : (typeof at === 'number' ? at : start.first) + 1
  return { from, to, next: { [start.parameter.name]: value } }
}

/**
 * The envelope told what the page is: a flag of more set to whether there is, a next page named
 * by its link (a URI, or where the query takes no cursor) or its cursor, or, at the last page,
 * null where its schema takes it, else left out where not required. `link` makes the next page's
 * link from its query values.
 */
export function tellPage (doc: OpenApiDocument, envelope: Record<string, unknown>, schema: JsonSchema, paging: Paging | undefined, next: Record<string, string | number> | undefined, link: (next: Record<string, string | number>) => { path: string, url: string }): void {
  const required = requiredIn(doc, schema)
  for (const [name, declared] of Object.entries(propertiesOf(doc, schema))) {
    const spelled = plain(name)
    const property = derefSchema(doc, declared) ?? {}
    const types = [property.type ?? []].flat()
    if (MORE.has(spelled) && (types.includes('boolean') || property.type === undefined)) envelope[name] = next !== undefined
    if (!NEXT.has(spelled)) continue
    if (next === undefined || paging === undefined) {
      if (types.includes('null') || property.nullable === true) envelope[name] = null
      else if (!required.has(name)) delete envelope[name]
      continue
    }
    const isLink = /^(uri|iri)(-reference)?$/.test(String(property.format)) || /url|link|href/.test(spelled) || paging.start?.by !== 'cursor'
    const { path, url } = link(next)
    envelope[name] = isLink ? (property.format === 'uri' || property.format === 'iri' ? url : path) : String(Object.values(next)[0])
  }
}
