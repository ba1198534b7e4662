/**
 * @module tools/fleet/entry
 * The fleet's entry module, put in front of the `wrangler deploy --dry-run` bundle without a line
 * of the product changed (as `bench/instrument.ts` does for the bench). It wraps the `LIMITER`
 * binding, in the Worker's `env` and in every object's, so that each call through it
 *
 * - is counted by the tier of the object it reaches (the name says: `<root>@region:<hint>`, a
 *   regional object; `<root>@<colo>`, a location's; else the key's root), per second;
 * - waits one hop there and one back: the one-way delay between the caller's location and the
 *   object's, from the world the harness passes in `FLEET_WORLD` (`hops.ts`), plus the fault of
 *   the moment (`POST /__fleet/fault`: more delay to the root, or the root unreachable).
 *
 * The Worker's answers carry `x-fleet-ms`, the time from its receiving the request to its answer
 * (the limiter's added latency: the demo origin answers in-process). `GET /__fleet/counters`
 * answers this isolate's calls per second.
 */
import { writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'

/** Path prefix of the harness's own endpoints: counters and faults. */
export const FLEET_PREFIX = '/__fleet/'

/** The response header with the Worker's time on the request (ms). */
export const WORKER_MS_HEADER = 'x-fleet-ms'

/** The binding holding the world's hops as JSON ({@link HopTable}). */
export const WORLD_BINDING = 'FLEET_WORLD'

/** The binding holding the Worker's location (an index into the hop table's locations). */
export const SELF_BINDING = 'FLEET_SELF'

/** What the entry reads of the world: locations, their delays, where regional objects live. */
export interface HopTable {
  /** Each location's `cf.colo`. */
  colos: string[]
  /** One-way delay between two locations (ms), by index. */
  oneWayMs: number[][]
  /** The location a regional object lives in, by region hint. */
  regionAt: Record<string, number>
}

/** What one isolate counted at its binding. */
export interface CallCounts {
  /** Calls per epoch second to root, regional and location objects. */
  calls: Record<string, [root: number, regional: number, location: number]>
  /** Calls to the root and their total time there, hops left out (ms): its service time. */
  root: [calls: number, ms: number]
}

/**
 * Writes the entry beside the bundle and returns its path.
 *
 * @param bundleFile - the bundle's main module
 */
export async function writeFleetEntry(bundleFile: string): Promise<string> {
  const path = join(bundleFile, '..', 'fleet-entry.js')
  await writeFile(path, entrySource(`./${basename(bundleFile)}`))
  return path
}

function entrySource(inner: string): string {
  // Plain JavaScript for workerd: it is not bundled again.
  return `import * as inner from ${JSON.stringify(inner)}
export * from ${JSON.stringify(inner)}

const calls = {}
const root = [0, 0]
const fault = { extraMs: 0, downFromMs: 0, downUntilMs: 0 }
// Where each root object lives: the location of its first caller, as the platform places it.
const rootAt = new Map()
let world

function tierOf(name) {
  const at = name.lastIndexOf('@')
  if (at < 0) return 0
  return name.startsWith('region:', at + 1) ? 1 : 2
}

function placeOf(name, caller) {
  const tier = tierOf(name)
  if (tier === 1) return world.regionAt[name.slice(name.lastIndexOf(':') + 1)] ?? caller
  if (tier === 2) {
    const at = world.colos.indexOf(name.slice(name.lastIndexOf('@') + 1))
    return at < 0 ? caller : at
  }
  if (!rootAt.has(name)) rootAt.set(name, caller)
  return rootAt.get(name)
}

function count(tier) {
  const second = Math.floor(Date.now() / 1000)
  const row = (calls[second] ??= [0, 0, 0])
  row[tier]++
}

class Unreachable extends Error {
  constructor() {
    super('Network connection lost.')
    this.retryable = true
  }
}

// Stubs are proxies that answer any property name with an RPC method; 'then' must stay as the
// runtime has it (undefined), or awaiting a stub would call the object.
function wrapStub(stub, name, caller) {
  const tier = tierOf(name)
  return new Proxy(stub, {
    get(target, property) {
      const value = Reflect.get(target, property)
      if (typeof property !== 'string' || property === 'then' || typeof value !== 'function')
        return value
      return async (...args) => {
        count(tier)
        const hopMs = world.oneWayMs[caller][placeOf(name, caller)] + (tier === 0 ? fault.extraMs : 0)
        await scheduler.wait(hopMs)
        const now = Date.now()
        if (tier === 0 && now >= fault.downFromMs && now < fault.downUntilMs) throw new Unreachable()
        try {
          return await target[property](...args)
        } finally {
          if (tier === 0) {
            root[0]++
            root[1] += Date.now() - now
          }
          await scheduler.wait(hopMs)
        }
      }
    },
  })
}

function wrapNamespace(namespace, caller) {
  return new Proxy(namespace, {
    get(target, property) {
      const value = Reflect.get(target, property)
      if (typeof value !== 'function') return value
      if (property === 'getByName')
        return (name, ...rest) => wrapStub(target.getByName(name, ...rest), name, caller)
      if (property === 'get')
        return (id, ...rest) => wrapStub(target.get(id, ...rest), id.name ?? String(id), caller)
      if (property === 'jurisdiction') return (j) => wrapNamespace(target.jurisdiction(j), caller)
      return value.bind(target)
    },
  })
}

// One wrapped env per env and caller, so that caches keyed by env identity keep working.
const wrapped = new WeakMap()
function wrapEnv(env, callerOf) {
  world ??= JSON.parse(env.${WORLD_BINDING})
  let byCaller = wrapped.get(env)
  if (byCaller === undefined) wrapped.set(env, (byCaller = new Map()))
  const caller = callerOf()
  let result = byCaller.get(caller)
  if (result === undefined) {
    result = { ...env, LIMITER: wrapNamespace(env.LIMITER, caller) }
    byCaller.set(caller, result)
  }
  return result
}

// The objects reach their class's namespace through ctx.exports first: wrapped the same way.
function wrapState(ctx, namespace) {
  return new Proxy(ctx, {
    get(target, property) {
      const value = Reflect.get(target, property)
      if (property === 'exports' && value)
        return new Proxy(value, {
          get: (exports, name) =>
            name === 'RateLimiterObject' ? namespace : Reflect.get(exports, name),
        })
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

const Base = inner.RateLimiterObject
export class RateLimiterObject extends Base {
  constructor(ctx, env) {
    const name = ctx.id.name ?? ''
    const own = wrapEnv(env, () => placeOf(name, 0))
    super(ctx, own)
    // The runtime's base class takes only the real state: the wrapped one is put in after it.
    Object.defineProperty(this, 'ctx', { value: wrapState(ctx, own.LIMITER) })
  }
}

const worker = inner.default
export default {
  async fetch(request, env, ctx) {
    const path = new URL(request.url).pathname
    if (path === ${JSON.stringify(`${FLEET_PREFIX}counters`)}) return Response.json({ calls, root })
    if (path === ${JSON.stringify(`${FLEET_PREFIX}fault`)}) {
      Object.assign(fault, await request.json())
      return Response.json(fault)
    }
    const startMs = Date.now()
    const response = await worker.fetch(request, wrapEnv(env, () => Number(env.${SELF_BINDING})), ctx)
    const answer = new Response(response.body, response)
    answer.headers.set(${JSON.stringify(WORKER_MS_HEADER)}, String(Date.now() - startMs))
    return answer
  },
}
`
}
