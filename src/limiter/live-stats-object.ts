/**
 * @module limiter/live-stats-object
 * The one Durable Object per deployment that the live view's counts are flushed to. A thin
 * shell around `live/store`: it merges each isolate's batch, keeps the last 60 minutes (a
 * record per minute, older ones deleted on every write), and answers the view.
 */
import { DurableObject } from 'cloudflare:workers'
import { LiveStore, type LiveView, type MinuteBatch } from '../live'

/** The instance name: one stats object per deployment. */
export const LIVE_STATS_NAME = 'live-stats'

const PREFIX = 'minute:'

/** Merges flushed minutes and answers the live view. */
export class LiveStatsObject extends DurableObject {
  readonly #store = new LiveStore()

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env)
    void ctx.blockConcurrencyWhile(async () => {
      const stored = await ctx.storage.list<MinuteBatch>({ prefix: PREFIX })
      for (const minute of stored.values()) this.#store.load(minute)
    })
  }

  /**
   * Merges one isolate's flush.
   *
   * @param batch - its minutes
   */
  async add(batch: MinuteBatch[]): Promise<void> {
    const { put, deleted } = this.#store.add(batch, Date.now())
    const entries: Record<string, MinuteBatch> = {}
    for (const minute of put) entries[PREFIX + minute.minute] = minute
    if (put.length > 0) await this.ctx.storage.put(entries)
    if (deleted.length > 0) await this.ctx.storage.delete(deleted.map((m) => PREFIX + m))
  }

  /** The live view now. */
  view(): LiveView {
    return this.#store.view(Date.now())
  }
}
