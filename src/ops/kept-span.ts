import { diag, SpanStatusCode, type AttributeValue, type HrTime, type Link, type SpanContext, type SpanKind, type SpanStatus } from '@opentelemetry/api'
import { hrTime, hrTimeDuration, type InstrumentationScope } from '@opentelemetry/core'
import type { Resource } from '@opentelemetry/resources'
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace'

// A span the sampler kept (tracing.ts): a plain record while it runs, its ids drawn at once (its
// request's log lines and its commit's links need them) and its attributes written as each part
// ends; once ended, the span itself, as the SDK's span processors and exporters take a finished
// one (ReadableSpan). Not made through the SDK's Span, whose attributes are copied one by one
// through a check that allocates a WeakSet for each value: with every request kept that was 3.8
// KB of garbage more a span, and the collector's time with it (docs/performance.md, "Traces").
// What the SDK's Span does to a span at its end, end() does: its times from the clock the SDK
// uses, and the span limits (OTEL_SPAN_*_LIMIT, OTEL_ATTRIBUTE_*_LIMIT), as the SDK applies them.

const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET })
const NO_EVENTS: TimedEvent[] = Object.freeze([]) as unknown as TimedEvent[]
const NOT_ENDED: HrTime = Object.freeze([0, 0]) as unknown as HrTime

/** The span limits a kept span can reach, at the SDK's defaults where OTEL_* says nothing. */
export interface KeptLimits {
  /** The first this many attributes are kept. */
  attributeCountLimit: number
  /** A longer string value is cut to this length. */
  attributeValueLengthLimit: number
  /** The last this many links are kept. */
  linkCountLimit: number
}

/** What every kept span shares: the provider's resource and the service's scope, and the limits. */
export interface KeptShared {
  readonly resource: Resource
  readonly instrumentationScope: InstrumentationScope
  readonly limits: KeptLimits
}

export class KeptSpan implements ReadableSpan {
  readonly name: string
  readonly kind: SpanKind
  readonly parentSpanContext: SpanContext | undefined
  /** performance.now() as it began. */
  readonly start = performance.now()
  attributes: Record<string, AttributeValue>
  links: Link[]
  status = UNSET
  readonly events = NO_EVENTS
  startTime = NOT_ENDED
  endTime = NOT_ENDED
  ended = false
  droppedAttributesCount = 0
  readonly droppedEventsCount = 0
  droppedLinksCount = 0
  readonly #context: SpanContext
  readonly #shared: KeptShared

  /** A span beginning now, with its ids (`context`), in its caller's trace (`parent`) or a new one. */
  constructor (name: string, kind: SpanKind, context: SpanContext, parent: SpanContext | undefined, attributes: Record<string, AttributeValue>, links: Link[], shared: KeptShared) {
    this.name = name
    this.kind = kind
    this.#context = context
    this.parentSpanContext = parent
    this.attributes = attributes
    this.links = links
    this.#shared = shared
  }

  spanContext (): SpanContext {
    return this.#context
  }

  get resource (): Resource {
    return this.#shared.resource
  }

  get instrumentationScope (): InstrumentationScope {
    return this.#shared.instrumentationScope
  }

  get duration (): HrTime {
    return hrTimeDuration(this.startTime, this.endTime)
  }

  /** Ends it now: its times on the SDK's clock (performance.now(), corrected to Date.now() as the SDK's Span corrects it), and its limits applied. */
  end (): void {
    const now = performance.now()
    const offset = Date.now() - (now + performance.timeOrigin)
    this.startTime = hrTime(this.start + offset)
    this.endTime = hrTime(now + offset)
    this.#limit(this.#shared.limits)
    this.ended = true
  }

  /** The first attributes up to the count limit, strings cut to the length limit; the last links up to theirs; what is dropped, counted. */
  #limit ({ attributeCountLimit, attributeValueLengthLimit, linkCountLimit }: KeptLimits): void {
    // As the SDK: a length limit that is not positive is none.
    const length = attributeValueLengthLimit > 0 ? attributeValueLengthLimit : Infinity
    let count = 0
    let within = true
    for (const key in this.attributes) {
      const value = this.attributes[key]
      if (++count > attributeCountLimit || (typeof value === 'string' && value.length > length)) within = false
    }
    if (!within) {
      const kept: Record<string, AttributeValue> = {}
      let n = 0
      for (const key in this.attributes) {
        if (n++ >= attributeCountLimit) break
        const value = this.attributes[key]
        kept[key] = typeof value === 'string' && value.length > length ? value.substring(0, length) : value
      }
      this.droppedAttributesCount = Math.max(count - attributeCountLimit, 0)
      if (this.droppedAttributesCount > 0) diag.warn('Dropping extra attributes.')
      this.attributes = kept
    }
    if (this.links.length > linkCountLimit) {
      this.droppedLinksCount = this.links.length - linkCountLimit
      this.links = this.links.slice(this.droppedLinksCount)
      diag.warn(`Dropped ${this.droppedLinksCount} links because linkCountLimit reached`)
    }
  }
}
