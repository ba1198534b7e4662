/**
 * @module limiter/isolate
 * What one isolate's limiter client keeps between requests: its counters, the denials it
 * repeats ({@link BlockCache}) and its calls in flight per key ({@link Coalescer}). One
 * instance per isolate ({@link limiterIsolate}); tests make several to stand in for isolates.
 */
import type { Decision } from '../types'
import { BlockCache } from './exact/block-cache'
import { Coalescer } from './exact/coalesce'
import type { BatchItem } from './rate-limiter-object'
import { ClientStats, clientStats } from './calls/stats'

/** A request's decision, and whether this isolate took it without a call. */
export interface Answer {
  decision: Decision
  local: boolean
}

/** The client's state in one isolate. */
export class LimiterIsolate {
  /** What this isolate's client did (`GET /__ratelimit/stats`). */
  readonly stats: ClientStats
  /** Denials answered here until their retry time. */
  readonly blocks: BlockCache
  /** Requests per key waiting for the call in flight. */
  readonly lanes: Coalescer<BatchItem, Answer>

  /**
   * @param options - parts to use instead of fresh ones (the default isolate shares the
   *   module's `clientStats()`)
   */
  constructor(
    options: { stats?: ClientStats; blocks?: BlockCache; lanes?: Coalescer<BatchItem, Answer> } = {}
  ) {
    this.stats = options.stats ?? new ClientStats(Date.now())
    this.blocks = options.blocks ?? new BlockCache()
    this.lanes = options.lanes ?? new Coalescer()
  }
}

let isolate: LimiterIsolate | undefined

/** This isolate's client state, created on first use (a clock read at module scope gives 0). */
export function limiterIsolate(): LimiterIsolate {
  return (isolate ??= new LimiterIsolate({ stats: clientStats() }))
}
