/**
 * @module tools/scale/run
 * One simulated run: a world of locations, a fleet of isolates each with its own limiter client,
 * the key's objects behind a simulated namespace, and a scenario's Poisson traffic, all in
 * virtual time ({@link VirtualClock}), deterministic by seed. Runs under Node (the CLI) and in
 * workerd (the tests) alike.
 */
import { Fleet } from './fleet'
import {
  CALLS_FIRST,
  limiterClient,
  type LimiterClient,
  OBJECT_CLASS,
  rootObjectName,
  type SimRequest,
  type Verdict,
} from './limiter-adapter'
import { Metrics } from './metrics'
import { SimNamespace, type NamespaceView } from './namespace'
import { stream } from './random'
import type { RunOptions } from './run-options'
import { planScenario } from './scenarios'
import { summarise, type Summary } from './summary'
import { Arrivals } from './traffic'
import { drainMicrotasks, VirtualClock } from './virtual-time'
import { buildWorld } from './world'
import type { SecondRow } from './metrics'

/** What a run measured. */
export interface RunResult {
  summary: Summary
  rows: SecondRow[]
}

/** The run's first instant: a whole minute, so windows start with the run. */
export const START_MS = 1_800_000_000_000
/** After the last arrival, how long decisions still in flight may take. */
const TAIL_MS = 5_000
/** How long after its time a decision may still reach the judge (a far object's answer). */
const JUDGE_LAG_MS = 3_000

/**
 * Runs one simulation.
 *
 * @param options - what to simulate
 * @param drain - lets every pending microtask run (the default suits Node and workerd)
 */
export async function runScale(
  options: RunOptions,
  drain: () => Promise<void> = drainMicrotasks
): Promise<RunResult> {
  const wallStart = performance.now()
  const durationMs = options.seconds * 1000
  const world = buildWorld(options.locations)
  const plan = planScenario(
    options.scenario,
    options.algorithm,
    world,
    options.demand,
    durationMs,
    options.burstS
  )
  const request: SimRequest = {
    rule: { id: 'scale' },
    key: 'scale',
    policy: plan.policy,
    cost: 1,
    failMode: options.failMode,
  }
  const root = rootObjectName(request)
  const clock = new VirtualClock(START_MS)
  const metrics = new Metrics(plan.policy, START_MS, durationMs + TAIL_MS, root)
  const namespace = new SimNamespace(
    clock,
    world,
    OBJECT_CLASS,
    { serviceMs: options.serviceMs, queueBound: options.queueBound },
    metrics
  )
  const views: NamespaceView[] = world.locations.map((l) => namespace.view(l.index))
  const arrivals = new Arrivals(
    (tMs) => plan.demandAt(tMs),
    stream(options.seed, 'traffic'),
    durationMs
  )
  const restore = clock.install()
  // Errors are made by the thousand when an object is overloaded; their stacks are never read.
  const errors = Error as { stackTraceLimit?: number }
  const stackTraceLimit = errors.stackTraceLimit
  errors.stackTraceLimit = 0
  const logged = new Map<string, number>()
  const warn = console.warn
  // The limiter logs each fail-open and failed refund: counted, not printed.
  console.warn = (line: unknown) => {
    const event = /"event":"([^"]+)"/.exec(String(line))?.[1] ?? 'other'
    logged.set(event, (logged.get(event) ?? 0) + 1)
  }
  let fleet: Fleet | undefined
  try {
    fleet = new Fleet({
      clock,
      count: options.isolates,
      meanLifeMs: options.meanLifeS * 1000,
      random: stream(options.seed, 'fleet'),
      weights: () => arrivals.weights,
      makeClient: (location, id) => {
        const client = limiterClient(
          {
            id,
            location,
            colo: world.locations[location]!.name,
            region: world.locations[location]!.region,
            namespace: views[location]!,
          },
          options.mode
        )
        if (clock.nowMs < START_MS + options.warmupS * 1000) return client
        // One round trip to the object it calls first (its location's, or the key's root): there,
        // the object's service time, and back.
        return watchFirst(client, clock, (waitMs) => {
          const to =
            CALLS_FIRST[options.mode] === 'root'
              ? (namespace.object(root)?.location ?? location)
              : location
          const roundTripMs =
            world.oneWayMs(location, to) + options.serviceMs + world.oneWayMs(to, location)
          metrics.coldIsolate(waitMs, roundTripMs)
        })
      },
    })
    if (plan.restartAtMs !== undefined)
      clock.at(START_MS + plan.restartAtMs, () =>
        namespace.object(root)?.restart(options.restartMs)
      )
    await loop(clock, arrivals, fleet, metrics, request, drain, START_MS + durationMs + TAIL_MS)
  } finally {
    console.warn = warn
    errors.stackTraceLimit = stackTraceLimit
    restore()
  }
  metrics.judge.flush(Number.POSITIVE_INFINITY)
  return {
    summary: summarise(options, metrics, {
      policy: plan.policy,
      shiftAtMs: plan.shiftAtMs,
      isolatesStarted: fleet?.born ?? 0,
      logged: Object.fromEntries(logged),
      wallSeconds: (performance.now() - wallStart) / 1000,
    }),
    rows: metrics.rows(options.seconds),
  }
}

/**
 * The client, reporting how long its first request waited (an isolate that just started).
 *
 * @param client - the isolate's client
 * @param clock - the run's clock
 * @param report - told the first request's wait (ms)
 */
function watchFirst(
  client: LimiterClient,
  clock: VirtualClock,
  report: (waitMs: number) => void
): LimiterClient {
  let first = true
  return {
    decide(request) {
      const verdict = client.decide(request)
      if (!first) return verdict
      first = false
      const arrivedMs = clock.nowMs
      const done = () => report(clock.nowMs - arrivedMs)
      if (verdict instanceof Promise) verdict.then(done, done)
      else report(0)
      return verdict
    },
  }
}

/** The event loop: at each instant, the events due, then the arrivals, then their microtasks. */
async function loop(
  clock: VirtualClock,
  arrivals: Arrivals,
  fleet: Fleet,
  metrics: Metrics,
  request: SimRequest,
  drain: () => Promise<void>,
  endMs: number
): Promise<void> {
  let nextFlushMs = START_MS + 1000
  for (;;) {
    const nowMs = Math.min(START_MS + Math.floor(arrivals.nextMs), clock.nextAtMs())
    if (nowMs >= endMs) break
    clock.advanceTo(nowMs)
    clock.runDue()
    // Compared as offsets: added to the epoch, a fraction would round.
    while (Math.floor(arrivals.nextMs) <= nowMs - START_MS) {
      const client = fleet.pick(arrivals.take())
      metrics.request(nowMs, request.cost)
      const verdict = client.decide(request)
      if (verdict instanceof Promise)
        verdict.then(
          (v) => metrics.decided(nowMs, request.cost, v, clock.nowMs),
          () => metrics.decided(nowMs, request.cost, FAILED, clock.nowMs)
        )
      else metrics.decided(nowMs, request.cost, verdict, nowMs)
    }
    // Whatever the instant's events and requests started runs before the clock moves on.
    do await drain()
    while (clock.runDue())
    if (nowMs >= nextFlushMs) {
      metrics.judge.flush(nowMs - JUDGE_LAG_MS)
      nextFlushMs = nowMs + 1000
    }
  }
}

/** A decision that threw (the adapter catches what the limiter throws: this is a bug). */
const FAILED: Verdict = { allowed: false, enforced: false, local: false }
