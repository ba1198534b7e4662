// Runs one scenario on one target: starts a fresh instance, drives it, and records what the
// instrumented entry and /proc saw. Alarm scenarios are in alarms.ts.
import { cpuShare, cpuSnapshot, type CpuShare } from './cpu-usage.ts'
import { readCounters, type Counters } from './instrument.ts'
import { ownDurableObjectCalls, Skip, startLimiter, type LimiterName } from './limiters.ts'
import { burst, HOT_IP, ipSource, measure, warmUp, type LoadResult } from './load.ts'
import type { Scenario } from './scenarios.ts'
import { startBare, type Target } from './targets.ts'

/** A target: bare or one of the limiters. */
export type TargetName = 'bare' | LimiterName

/** What the run as a whole provides to each scenario. */
export interface RunContext {
  origin: { url: string; pid: number }
  /** Instrumented entry per limiter that could be built. */
  entries: Partial<Record<LimiterName, string>>
  /** Why a limiter could not be built, by name. */
  unavailable: Partial<Record<LimiterName, string>>
  duration: number
  connections: number
  /** Requests per second, or `undefined` for a closed loop (see `--rate`). */
  rate: number | undefined
  /** Distinct keys of the many-keys and alarm scenarios. */
  keys: number
  latencyMs: number
  /** Registers a target for disposal on interrupt; returns its unregistration. */
  track: (target: Target) => () => void
}

/** A measured load run. */
export interface Measured extends LoadResult {
  cpu?: CpuShare
  /** workerd CPU per request (the limiter's Durable Objects included), ms. */
  cpuMsPerRequest?: number
  /** Calls through the Durable Object binding per request, counted by the instrumented entry. */
  durableObjectCallsPerRequest: number
  /** The same from the limiter's own `GET /__ratelimit/stats`, where it exists. */
  ownDurableObjectCallsPerRequest?: number
  /** Cleanup alarms that ran during the measured run. */
  alarms: number
  /** Limiter objects constructed per request during the run (new keys, or evicted ones back). */
  objectsStartedPerRequest: number
}

/** One scenario on one target in one rep. */
export interface RunRecord {
  scenario: string
  target: TargetName
  rep: number
  skipped?: string
  measured?: Measured
  /** Scenario-specific results (warm-up time, alarm schedule, admitted count). */
  details?: Record<string, number | string>
}

/**
 * Starts a fresh instance of `target` for `scenario`, passes it to `body` and disposes of it.
 * A scenario the target cannot run is recorded as skipped with the reason.
 */
export async function withTarget(
  context: RunContext,
  scenario: Scenario,
  target: TargetName,
  rep: number,
  body: (instance: Target) => Promise<Omit<RunRecord, 'scenario' | 'target' | 'rep'>>
): Promise<RunRecord> {
  const base = { scenario: scenario.name, target, rep }
  if (target !== 'bare' && context.entries[target] === undefined)
    return { ...base, skipped: context.unavailable[target] ?? 'not built' }
  let instance: Target
  try {
    instance =
      target === 'bare'
        ? await startBare(context.origin.url)
        : await startLimiter(
            target,
            context.entries[target] as string,
            context.origin.url,
            scenario.spec,
            context.latencyMs
          )
  } catch (error) {
    if (error instanceof Skip) return { ...base, skipped: error.message }
    throw error
  }
  const untrack = context.track(instance)
  try {
    return { ...base, ...(await body(instance)) }
  } finally {
    untrack()
    await instance.dispose()
  }
}

/** Seconds `work` took. */
async function timed(work: () => Promise<unknown>): Promise<number> {
  const startedAt = performance.now()
  await work()
  return (performance.now() - startedAt) / 1000
}

/** A `load` scenario: warm-up, then the measured run. */
export function runLoad(
  context: RunContext,
  scenario: Scenario,
  target: TargetName,
  rep: number
): Promise<RunRecord> {
  return withTarget(context, scenario, target, rep, async (instance) => {
    // One source for warm-up and run: many-keys has met all its keys, new-keys never repeats one.
    const nextIp = ipSource(scenario.keys, context.keys)
    const keys = scenario.keys === 'many' ? context.keys : 0
    const warmUpSeconds = await timed(() => warmUp(instance.url, nextIp, keys))
    // The first pass creates the objects. A target slower to create them than workerd's idle
    // eviction (about 10 s locally) lost its first ones before the pass ended, and would measure
    // their re-creation, not warm objects: a second pass, for every target alike, wakes them.
    if (keys > 0) await warmUp(instance.url, nextIp, keys)
    const measured = await measureRun(context, target, instance.url, nextIp)
    return { measured, details: { warmUpSeconds } }
  })
}

/** 300 requests at 50 in flight on one key limited to 100: how many were let through. */
export function runExactness(
  context: RunContext,
  scenario: Scenario,
  target: TargetName,
  rep: number
): Promise<RunRecord> {
  return withTarget(context, scenario, target, rep, async (instance) => {
    const statuses = await burst(instance.url, () => HOT_IP, 300, 50)
    const admitted = Object.entries(statuses)
      .filter(([code]) => code.startsWith('2'))
      .reduce((sum, [, count]) => sum + count, 0)
    return { details: { admitted, limit: scenario.spec.limit, statuses: JSON.stringify(statuses) } }
  })
}

/** The measured run on a warm instance, with CPU, Durable Object calls and alarms. */
export async function measureRun(
  context: RunContext,
  target: TargetName,
  url: string,
  nextIp: () => string
): Promise<Measured> {
  const limiter = target === 'bare' ? undefined : target
  const counters = async (): Promise<Counters> =>
    limiter
      ? readCounters(url)
      : { requests: 0, durableObjectCalls: 0, alarms: 0, objectsStarted: 0 }
  const own = async () => (limiter ? ownDurableObjectCalls(limiter, url) : undefined)
  const ownBefore = await own()
  const before = await counters()
  const cpuBefore = cpuSnapshot(context.origin.pid)
  const load = await measure(url, context.connections, context.duration, nextIp, context.rate)
  const cpu = cpuShare(cpuBefore, cpuSnapshot(context.origin.pid))
  const after = await counters()
  const ownAfter = await own()
  const perRequest = (n: number) => (load.requests > 0 ? n / load.requests : Number.NaN)
  // Over the requests the Worker received, which include those still in flight at the end.
  const received = after.requests - before.requests
  const perReceived = (n: number) => (limiter && received > 0 ? n / received : perRequest(n))
  return {
    ...load,
    cpu,
    cpuMsPerRequest: cpu ? perRequest(cpu.workerdMs) : undefined,
    durableObjectCallsPerRequest: perReceived(after.durableObjectCalls - before.durableObjectCalls),
    ownDurableObjectCallsPerRequest:
      ownBefore !== undefined && ownAfter !== undefined
        ? perReceived(ownAfter - ownBefore)
        : undefined,
    alarms: after.alarms - before.alarms,
    objectsStartedPerRequest: perReceived(after.objectsStarted - before.objectsStarted),
  }
}
