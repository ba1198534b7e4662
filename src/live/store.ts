/**
 * @module live/store
 * What the stats Durable Object keeps: the flushed minutes of every isolate, merged, for the
 * last 60 minutes (older ones dropped on every write), and the live view read from them. Pure:
 * the time comes in as `nowMs`.
 */
import { SpaceSaving } from './sketch'
import { minuteOf, noCounts, OUTCOMES, SKETCH_SLOTS } from './tally'
import type { LimitedKey, LiveView, MinuteBatch, RuleCounts, RuleSeries, TopLimited } from './types'

/** How many minutes the view covers, the current one included. */
export const WINDOW_MINUTES = 60

const MINUTE_MS = 60_000

/** The most keys `topLimited` lists. */
const TOP_KEYS = 100

/** The changes one `add` made, for the object to write: minutes to store and minutes to delete. */
export interface StoreChanges {
  put: MinuteBatch[]
  deleted: number[]
}

/** The merged minutes of every isolate. */
export class LiveStore {
  readonly #minutes = new Map<number, MinuteBatch>()

  /**
   * Takes back a stored minute (when the object starts).
   *
   * @param minute - as stored
   */
  load(minute: MinuteBatch): void {
    this.#minutes.set(minute.minute, minute)
  }

  /**
   * Merges an isolate's flush. Minutes outside the window (older than 60 minutes, or more than
   * one minute ahead of this clock) are ignored; minutes that left the window are dropped.
   *
   * @param batch - the isolate's minutes
   * @param nowMs - the object's clock
   */
  add(batch: readonly MinuteBatch[], nowMs: number): StoreChanges {
    const { first, last } = window(nowMs)
    const put = new Map<number, MinuteBatch>()
    for (const incoming of batch) {
      if (incoming.minute < first || incoming.minute > last + MINUTE_MS) continue
      const merged = merge(this.#minutes.get(incoming.minute), incoming)
      this.#minutes.set(merged.minute, merged)
      put.set(merged.minute, merged)
    }
    const deleted: number[] = []
    for (const minute of this.#minutes.keys()) {
      if (minute >= first) continue
      this.#minutes.delete(minute)
      deleted.push(minute)
    }
    return { put: [...put.values()], deleted }
  }

  /**
   * The live view at `nowMs`: each rule's last 60 minutes and totals, and the most limited keys.
   *
   * @param nowMs - the object's clock
   */
  view(nowMs: number): LiveView {
    const { first, last } = window(nowMs)
    const rules: Record<string, RuleSeries> = {}
    const keys = new Map<string, LimitedKey>()
    for (const [start, minute] of this.#minutes) {
      if (start < first || start > last) continue
      for (const [id, counts] of Object.entries(minute.rules)) {
        const series = (rules[id] ??= emptySeries(first))
        const entry = series.minutes[(start - first) / MINUTE_MS]!
        for (const outcome of OUTCOMES) {
          entry[outcome] += counts[outcome] ?? 0
          series[outcome] += counts[outcome] ?? 0
        }
      }
      for (const item of minute.limited) {
        const id = `${item.rule}\n${item.key}`
        const found = keys.get(id)
        if (!found) keys.set(id, { ...item })
        else {
          found.count += item.count
          found.retryAtMs = Math.max(found.retryAtMs, item.retryAtMs)
        }
      }
    }
    const topLimited: TopLimited[] = [...keys.values()]
      .sort((a, b) => b.count - a.count)
      .slice(0, TOP_KEYS)
      .map(({ rule, key, count, retryAtMs }) => ({
        rule,
        key,
        count,
        retryAfterMs: Math.max(0, retryAtMs - nowMs),
      }))
    return { rules, topLimited }
  }
}

/** The first and last minute of the window ending at `nowMs`. */
function window(nowMs: number): { first: number; last: number } {
  const last = minuteOf(nowMs)
  return { first: last - (WINDOW_MINUTES - 1) * MINUTE_MS, last }
}

function emptySeries(first: number): RuleSeries {
  return {
    ...noCounts(),
    minutes: Array.from({ length: WINDOW_MINUTES }, (_, i) => ({
      minute: first + i * MINUTE_MS,
      ...noCounts(),
    })),
  }
}

/** Two counts of one minute as one; the limited keys merged in a sketch of the same size. */
function merge(stored: MinuteBatch | undefined, incoming: MinuteBatch): MinuteBatch {
  if (!stored) return { ...incoming, limited: incoming.limited.slice(0, SKETCH_SLOTS) }
  const rules: Record<string, RuleCounts> = { ...stored.rules }
  for (const [id, counts] of Object.entries(incoming.rules)) {
    const sum = { ...(rules[id] ?? noCounts()) }
    // A flush from an isolate of an older version has no `degraded`.
    for (const outcome of OUTCOMES) sum[outcome] += counts[outcome] ?? 0
    rules[id] = sum
  }
  const sketch = new SpaceSaving<number>(SKETCH_SLOTS)
  const entries = new Map<string, LimitedKey>()
  for (const item of [...stored.limited, ...incoming.limited]) {
    const id = `${item.rule}\n${item.key}`
    const seen = entries.get(id)
    const retryAtMs = Math.max(seen?.retryAtMs ?? 0, item.retryAtMs)
    entries.set(id, { ...item, retryAtMs })
    sketch.add(id, retryAtMs, item.count)
  }
  const limited = sketch.top().map(({ id, count, value }) => ({
    ...entries.get(id)!,
    count,
    retryAtMs: value,
  }))
  return { minute: incoming.minute, rules, limited }
}
