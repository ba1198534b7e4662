/**
 * @module tools/fleet/summary
 * A fleet run in one record (what `--json` prints), from what the harness saw: every request's
 * span, status and the Worker's time on it, the calls each Worker counted at its binding, and the
 * isolates' heaps. Rates, shares and percentiles leave out the first 5 s (every isolate starts
 * cold); windows and over-admission cover the whole run.
 */
import type { CallCounts } from './entry'
import { judge, segmentsOf, type WindowCount } from './judge'
import type { Sent } from './load'
import type { FleetOptions } from './options'
import { quantile, rateOf, settledAt, type Rate } from './stats'
import type { FleetWorld } from './world'

/** What the scenario did, when (epoch ms). */
export interface FaultTimes {
  /** When the fault began. */
  fromMs: number
  /** When it was over (the runtime back, the root reachable, both versions no longer served). */
  untilMs: number
  /** Instants where the key's count restarts (a reset). */
  cuts: number[]
  /** The limit from `fromMs` on, when an edit changes it. */
  limitAfter?: number
}

/** Seconds at the start left out of rates, shares and percentiles. */
export const WARMUP_S = 5

/** One run's figures. */
export interface FleetSummary {
  scenario: string
  algorithm: string
  failMode: string
  demand: number
  isolates: number
  locations: number
  regions: number
  seconds: number
  /** Units each request cost. */
  cost: number
  /** Requests sent, and arrivals not sent (too many in flight, or the runtime restarting). */
  requests: number
  dropped: number
  windows: WindowCount[]
  /** Units no placement of decisions within their requests' spans fits under the exact limit. */
  overAdmitted: number
  /** Calls per second through the binding, by the tier of the object called. */
  calls: { root: Rate; regional: Rate; location: Rate }
  /** Requests the Worker answered in less than one round trip to its location's object. */
  localShare: number
  /** The Worker's time on a request (ms). */
  latencyMs: { p50: number | null; p99: number | null; p999: number | null }
  /** 5xx answers other than a fail-closed rule's documented 503. */
  errors5xx: number
  /** Fail-closed 503s (documented), fail-opens (`X-RateLimit-Unenforced`), lost connections. */
  failedClosed: number
  failedOpen: number
  connectionErrors: number
  /** The root's time on a call, hops left out (ms): its service time and queue. */
  rootServiceMs: number | null
  /** The largest heap of an isolate (MB), the objects' isolate among them. */
  isolateMemoryMb: number | null
  /** The fault: when (s from the start), how long, and how long after it the share was steady again. */
  fault: { atS: number; forS: number; recoveredAfterS: number | null } | null
}

/** What the run saw. */
export interface Observed {
  place: FleetWorld
  sent: readonly Sent[]
  dropped: number
  counters: readonly CallCounts[]
  memoryMb: readonly number[]
  startMs: number
  endMs: number
  fault: FaultTimes | undefined
  /** Units a window allows under a version's limit. */
  allowed: (limit?: number) => number
}

/**
 * The summary of a finished run.
 *
 * @param options - the run
 * @param seen - what it saw
 */
export function summarise(options: FleetOptions, seen: Observed): FleetSummary {
  const { sent, fault } = seen
  const answered = sent.filter((s) => s.status > 0)
  const admitted = answered.filter((s) => s.status < 300 && !s.unenforced)
  const firstMs = Math.min(seen.startMs, ...sent.map((s) => s.sentMs))
  const lastMs = Math.max(seen.endMs, ...sent.map((s) => s.answeredMs)) + 1
  const editAt = fault?.limitAfter === undefined ? Number.POSITIVE_INFINITY : fault.fromMs
  const segments = segmentsOf(
    firstMs,
    lastMs,
    options.periodMs,
    (start) =>
      start + options.periodMs > editAt
        ? seen.allowed(Math.min(options.limit, fault!.limitAfter!))
        : seen.allowed(),
    fault?.cuts ?? []
  )
  const judged = judge(admitted, segments)
  const fromS = Math.floor(seen.startMs / 1000) + WARMUP_S
  const toS = Math.floor(seen.endMs / 1000)
  const tier = (k: 0 | 1 | 2) => {
    const perSecond = new Map<number, number>()
    for (const counts of seen.counters)
      for (const [second, row] of Object.entries(counts.calls))
        perSecond.set(Number(second), (perSecond.get(Number(second)) ?? 0) + row[k])
    return rateOf(perSecond, fromS, toS)
  }
  // A call costs at least a round trip to the location's object: a faster answer waited on none.
  const localMs = 2 * Math.min(...seen.place.hops.oneWayMs.map((row, i) => row[i]!))
  const measured = answered.filter((s) => s.sentMs >= fromS * 1000 && s.workerMs !== null)
  const isLocal = (s: Sent) => s.workerMs! < localMs
  const workerMs = measured.map((s) => s.workerMs!)
  const fleetMemory = seen.memoryMb
  return {
    scenario: options.scenario,
    algorithm: options.algorithm,
    failMode: options.failMode,
    demand: options.demand,
    isolates: options.isolates,
    locations: options.locations,
    regions: seen.place.regions.length,
    seconds: options.seconds,
    cost: options.cost,
    requests: sent.length,
    dropped: seen.dropped,
    windows: judged.windows,
    overAdmitted: judged.overAdmitted,
    calls: { root: tier(0), regional: tier(1), location: tier(2) },
    localShare: round(measured.filter(isLocal).length / Math.max(1, measured.length), 4),
    latencyMs: {
      p50: quantile(workerMs, 0.5),
      p99: quantile(workerMs, 0.99),
      p999: quantile(workerMs, 0.999),
    },
    errors5xx: answered.filter(
      (s) => s.status >= 500 && !(s.status === 503 && options.failMode === 'closed')
    ).length,
    failedClosed: answered.filter((s) => s.status === 503 && options.failMode === 'closed').length,
    failedOpen: answered.filter((s) => s.unenforced).length,
    connectionErrors: sent.length - answered.length,
    rootServiceMs: rootServiceMs(seen.counters),
    isolateMemoryMb: fleetMemory.length > 0 ? Math.max(...fleetMemory) : null,
    fault: fault ? faultOf(fault, seen.startMs, measured, isLocal, fromS, toS) : null,
  }
}

function rootServiceMs(counters: readonly CallCounts[]): number | null {
  const calls = counters.reduce((a, c) => a + c.root[0], 0)
  const ms = counters.reduce((a, c) => a + c.root[1], 0)
  return calls > 0 ? round(ms / calls, 2) : null
}

/** When the fault was, and the first second after it from which the local share held steady. */
function faultOf(
  fault: FaultTimes,
  startMs: number,
  measured: readonly Sent[],
  isLocal: (s: Sent) => boolean,
  fromS: number,
  toS: number
): FleetSummary['fault'] {
  const shares = new Map<number, number>()
  const totals = new Map<number, [local: number, all: number]>()
  for (const s of measured) {
    const second = Math.floor(s.sentMs / 1000)
    const row = totals.get(second) ?? [0, 0]
    row[0] += isLocal(s) ? 1 : 0
    row[1]++
    totals.set(second, row)
  }
  for (const [second, [local, all]] of totals) shares.set(second, local / all)
  const faultS = Math.floor(fault.fromMs / 1000)
  const before = [...totals].filter(([s]) => s >= fromS && s < faultS)
  const steady =
    before.reduce((a, [, [local]]) => a + local, 0) /
    Math.max(
      1,
      before.reduce((a, [, [, all]]) => a + all, 0)
    )
  const overS = Math.ceil(fault.untilMs / 1000)
  const settled = settledAt(shares, steady, overS, toS, 0.05)
  return {
    atS: round((fault.fromMs - startMs) / 1000, 1),
    forS: round((fault.untilMs - fault.fromMs) / 1000, 1),
    recoveredAfterS: settled === null ? null : Math.max(0, settled * 1000 - fault.untilMs) / 1000,
  }
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits
  return Math.round(value * scale) / scale
}
