/**
 * @module http/observe/live
 * The isolate's side of the live view: counts decisions in a {@link LiveTally} (a few map
 * updates per request), flushes them at most every `LIVE_FLUSH_SECONDS` to the deployment's
 * one stats object, and reads the view back for `GET /__ratelimit/stats`.
 */
import { LIVE_STATS_NAME } from '../../limiter/live-stats-object'
import { LiveTally, type LiveView, type MinuteBatch } from '../../live'
import type { KeyHasher } from './key-hash'
import { logEvent } from '../../log'
import type { LiveStatsNamespace } from '../shared/wiring'

/** This isolate's unflushed counts. */
export const liveTally = new LiveTally()

let lastFlushMs = Number.NEGATIVE_INFINITY

/**
 * Whether a flush is due; if so, the next one is `intervalMs` away from now.
 *
 * @param nowMs - the current time
 * @param intervalMs - the least time between flushes
 */
export function flushDue(nowMs: number, intervalMs: number): boolean {
  if (!liveTally.pending || nowMs - lastFlushMs < intervalMs) return false
  lastFlushMs = nowMs
  return true
}

/**
 * Sends everything counted so far to the stats object, hidden keys hashed first. Never
 * throws: a failed flush is logged and its counts are lost, no decision waits on it.
 *
 * @param namespace - the `LIMITER_STATS` binding
 * @param hasher - hashes the keys of rules that hide them
 */
export async function flushLive(namespace: LiveStatsNamespace, hasher: KeyHasher): Promise<void> {
  const tallied = liveTally.take()
  if (tallied.length === 0) return
  try {
    const batch: MinuteBatch[] = await Promise.all(
      tallied.map(async ({ minute, rules, limited }) => ({
        minute,
        rules,
        limited: await Promise.all(
          limited.map(async ({ hide, ...item }) =>
            hide ? { ...item, key: await hasher.hidden(item.key) } : item
          )
        ),
      }))
    )
    await namespace.getByName(LIVE_STATS_NAME).add(batch)
  } catch (error) {
    logEvent('warn', 'live-stats-flush-failed', { error: String(error) })
  }
}

/**
 * The live view, with this isolate's counts flushed first so they are in it.
 *
 * @param namespace - the `LIMITER_STATS` binding
 * @param hasher - hashes the keys of rules that hide them
 */
export async function readLive(
  namespace: LiveStatsNamespace,
  hasher: KeyHasher
): Promise<LiveView> {
  await flushLive(namespace, hasher)
  return namespace.getByName(LIVE_STATS_NAME).view()
}
