/**
 * @module tools/scale/run
 * One simulated run: a world of locations, a fleet of isolates each with its own limiter client,
 * the key's objects behind a simulated namespace, and a scenario's Poisson traffic, all in
 * virtual time ({@link VirtualClock}), deterministic by seed. Runs under Node (the CLI) and in
 * workerd (the tests) alike.
 */
import { samePolicy } from '../../src/algorithms/key-record'
import type { LeasablePolicy } from '../../src/algorithms/reserve'
import { Bounds } from './bounds'
import { Clocks } from './clocks'
import { Fleet } from './fleet'
import {
  CALLS_FIRST,
  limiterClient,
  objectClass,
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
import { editedVersion, Propagation, tierPolicies } from './versions'
import { drainMicrotasks, VirtualClock } from './virtual-time'
import { buildWorld } from './world'
import type { SecondRow } from './metrics'

/** An isolate's client as the run calls it: a request of a tier, under its version of the rule. */
interface SeatClient {
  decide(tier: number): Verdict | Promise<Verdict>
}

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
    options.burstS,
    options
  )
  const sim = options.world
  const burstIsLimit = options.burstS === undefined
  const before = tierPolicies(plan.policy, sim.tiers, burstIsLimit)
  const after = sim.edit === 'none' ? undefined : editedVersion(before, sim.edit, burstIsLimit)
  const editAtMs = (sim.editAtS ?? Math.floor(options.seconds / 2)) * 1000
  const propagationMs = sim.propagationS * 1000
  // The requests of each version (before, after) and tier: one object each, as a rule's check is.
  const cost = options.cost ?? 1
  const requests: SimRequest[][] = [before, after ?? before].map((version) =>
    version.map((policy) => ({
      rule: { id: 'scale' },
      key: 'scale',
      policy,
      cost,
      failMode: options.failMode,
    }))
  )
  const root = rootObjectName(requests[0]![0]!)
  const clock = new VirtualClock(START_MS)
  const clocks = new Clocks(sim.clocks, options.seed, START_MS)
  const rootClock = clocks.ofObject(root)
  // The version after binds from when the key's root hears of it (the root's clock).
  const edit = {
    firstMs: Number.POSITIVE_INFINITY,
    overlapEndMs: rootClock.read(START_MS + editAtMs + propagationMs),
  }
  const metrics = new Metrics(
    {
      bounds: (shared) => new Bounds(before, after, edit, shared),
      periodMs: plan.policy.periodMs,
      tiers: sim.tiers,
    },
    START_MS,
    durationMs + TAIL_MS,
    { name: root, clock: rootClock }
  )
  // Two versions are in use from when the key's root hears of the version after (a call
  // under one of its policies): what it grants from then on is held to both.
  if (after)
    metrics.onRootCall((args, atMs) => {
      if (edit.firstMs !== Number.POSITIVE_INFINITY) return
      const policy = args?.find(
        (arg) => typeof arg === 'object' && arg !== null && 'algorithm' in arg
      )
      if (policy && after.some((each) => samePolicy(each, policy as LeasablePolicy)))
        edit.firstMs = rootClock.read(atMs)
    })
  const lost = stream(options.seed, 'lost answers')
  const clockOf = (name: string) => clocks.ofObject(name)
  const namespace = new SimNamespace(
    clock,
    world,
    objectClass(clockOf),
    {
      serviceMs: options.serviceMs,
      queueBound: options.queueBound,
      clockOf,
      ...(sim.lostAnswers > 0
        ? { fault: () => (lost() < sim.lostAnswers ? ('lost' as const) : undefined) }
        : {}),
    },
    metrics
  )
  const views: NamespaceView[] = world.locations.map((l) => namespace.view(l.index))
  const arrivals = new Arrivals(
    (tMs) => plan.demandAt(tMs),
    stream(options.seed, 'traffic'),
    durationMs
  )
  const propagation = new Propagation(
    { tiers: sim.tiers, edit: sim.edit, editAtMs, propagationMs },
    options.seed
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
  let fleet: Fleet<SeatClient> | undefined
  try {
    fleet = new Fleet<SeatClient>({
      clock,
      count: options.isolates,
      meanLifeMs: options.meanLifeS * 1000,
      random: stream(options.seed, 'fleet'),
      weights: () => arrivals.weights,
      makeClient: (location, id) => {
        const limiter = limiterClient(
          {
            id,
            location,
            colo: world.locations[location]!.name,
            region: world.locations[location]!.region,
            namespace: views[location]!,
            clock: clocks.of('isolate', String(id)),
          },
          options.mode
        )
        // The version this isolate runs: the rule's, then the edited one from its own moment.
        const switchAtMs = START_MS + propagation.switchAtMs()
        const client: SeatClient = {
          decide: (tier) => limiter.decide(requests[clock.nowMs < switchAtMs ? 0 : 1]![tier]!),
        }
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
    const deployed = fleet
    if (sim.deployAtS !== undefined)
      clock.at(START_MS + sim.deployAtS * 1000, () => {
        for (const server of namespace.objects.values()) server.restart(options.restartMs)
        deployed.replaceAll()
      })
    const tierOf = stream(options.seed, 'tiers')
    const pickTier = sim.tiers > 1 ? () => Math.floor(tierOf() * sim.tiers) : () => 0
    await loop(
      clock,
      arrivals,
      fleet,
      metrics,
      pickTier,
      drain,
      START_MS + durationMs + TAIL_MS,
      cost
    )
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
  client: SeatClient,
  clock: VirtualClock,
  report: (waitMs: number) => void
): SeatClient {
  let first = true
  return {
    decide(tier) {
      const verdict = client.decide(tier)
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
  fleet: Fleet<SeatClient>,
  metrics: Metrics,
  pickTier: () => number,
  drain: () => Promise<void>,
  endMs: number,
  cost: number
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
      const tier = pickTier()
      metrics.request(nowMs, cost, tier)
      const verdict = client.decide(tier)
      if (verdict instanceof Promise)
        verdict.then(
          (v) => metrics.decided(nowMs, cost, v, clock.nowMs, tier),
          () => metrics.decided(nowMs, cost, FAILED, clock.nowMs, tier)
        )
      else metrics.decided(nowMs, cost, verdict, nowMs, tier)
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
