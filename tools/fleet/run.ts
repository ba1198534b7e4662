/**
 * @module tools/fleet/run
 * One fleet run: the fleet started on fresh storage, the rules written, the load sent for the
 * run's seconds while the scenario's fault happens, then everything measured from outside
 * (`summary.ts`).
 */
import { rm } from 'node:fs/promises'
import { startLoad } from './load'
import type { FleetOptions } from './options'
import { isolateMemoryMb } from './memory'
import { allowedPerWindow, editedLimit, RULE_ID, rulesDocument } from './rules'
import { ADMIN_TOKEN, startRuntime, type Runtime } from './runtime'
import { summarise, type FaultTimes, type FleetSummary } from './summary'
import { fleetWorld } from './world'

/** Most requests in flight from the harness. */
const MAX_IN_FLIGHT = 512
/** How long the edit's two versions are served side by side (ms). */
const EDIT_OVERLAP_MS = 20_000
/** How long the root is 300 ms slower in `slow-root` (ms). */
const SLOW_ROOT_MS = 10_000
/** How long the root is unreachable in `root-down` (ms). */
const ROOT_DOWN_MS = 5_000

/**
 * Runs the fleet once.
 *
 * @param options - the run
 * @param entryPath - the fleet's entry beside the bundle
 * @param persistDir - a folder for the run's storage (emptied first)
 */
export async function runFleet(
  options: FleetOptions,
  entryPath: string,
  persistDir: string
): Promise<FleetSummary> {
  await rm(persistDir, { recursive: true, force: true })
  const place = fleetWorld(options.isolates, options.locations)
  const runtime = await startRuntime({
    entryPath,
    isolateAt: place.isolateAt,
    hops: place.hops,
    persistDir,
    rulesRefreshS: 1,
  })
  try {
    await runtime.putRules('a', rulesDocument(options))
    await runtime.putRules('b', rulesDocument(options))
    const ratePerS = (options.demand * options.limit * 1000) / options.periodMs / options.cost
    const startMs = Date.now()
    const endMs = startMs + options.seconds * 1000
    // Mid-window, after a whole window of steady load.
    const faultAtMs =
      (Math.floor((startMs + 5_000) / options.periodMs) + 1) * options.periodMs +
      options.periodMs / 2
    const load = startLoad({
      url: runtime.url,
      weights: place.world.locations.map((l) => l.weight),
      cf: place.cf,
      isolateAt: place.isolateAt,
      isolateName: runtime.isolateName,
      rateAt: () => ratePerS,
      cost: options.cost,
      seed: options.seed,
      maxInFlight: MAX_IN_FLIGHT,
    })
    const memory: number[] = []
    const counters: Awaited<ReturnType<Runtime['counters']>> = []
    const [sent, fault] = await Promise.all([
      load.until(endMs),
      scenario(options, runtime, faultAtMs, {
        pause: (paused) => load.pause(paused),
        snapshot: async () => {
          counters.push(...(await runtime.counters()))
          memory.push(...(await isolateMemoryMb(runtime)))
        },
      }),
    ])
    counters.push(...(await runtime.counters()))
    memory.push(...(await isolateMemoryMb(runtime)))
    return summarise(options, {
      place,
      sent,
      dropped: load.dropped,
      counters,
      memoryMb: memory,
      startMs,
      endMs,
      fault,
      allowed: (limit) => allowedPerWindow(options, limit),
    })
  } finally {
    await runtime.dispose()
  }
}

interface Hooks {
  pause(paused: boolean): void
  /** Reads what the runtime holds in memory before it is lost. */
  snapshot(): Promise<void>
}

async function scenario(
  options: FleetOptions,
  runtime: Runtime,
  atMs: number,
  hooks: Hooks
): Promise<FaultTimes | undefined> {
  const none = { cuts: [] }
  switch (options.scenario) {
    case 'steady':
      return undefined
    case 'deploy': {
      await until(atMs)
      hooks.pause(true)
      await hooks.snapshot()
      const fromMs = Date.now()
      await runtime.restart()
      hooks.pause(false)
      return { ...none, fromMs, untilMs: Date.now() }
    }
    case 'slow-root':
      await until(atMs)
      await runtime.fault({ extraMs: 300 })
      await until(atMs + SLOW_ROOT_MS)
      await runtime.fault({ extraMs: 0 })
      return { ...none, fromMs: atMs, untilMs: atMs + SLOW_ROOT_MS }
    case 'root-down':
      await runtime.fault({ downFromMs: atMs, downUntilMs: atMs + ROOT_DOWN_MS })
      return { ...none, fromMs: atMs, untilMs: atMs + ROOT_DOWN_MS }
    case 'edit': {
      const limitAfter = editedLimit(options.limit)
      await until(atMs)
      await runtime.putRules('a', rulesDocument(options, limitAfter))
      await until(atMs + EDIT_OVERLAP_MS)
      await runtime.putRules('b', rulesDocument(options, limitAfter))
      return { ...none, fromMs: atMs, untilMs: atMs + EDIT_OVERLAP_MS, limitAfter }
    }
    case 'reset': {
      await until(atMs)
      const sentMs = Date.now()
      const response = await fetch(new URL(`/__ratelimit/keys/${RULE_ID}`, runtime.url), {
        method: 'DELETE',
        headers: {
          'MF-Route-Override': runtime.isolateName(0),
          authorization: `Bearer ${ADMIN_TOKEN}`,
        },
      })
      await response.arrayBuffer()
      if (!response.ok) throw new Error(`the admin reset answered ${response.status}`)
      const answeredMs = Date.now()
      return { fromMs: sentMs, untilMs: answeredMs, cuts: [Math.round((sentMs + answeredMs) / 2)] }
    }
  }
}

function until(atMs: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, atMs - Date.now())))
}
