// A bench-only entry module put in front of a built Worker bundle, so that every limiter is
// measured the same way from the outside, without a line of its own code changed:
//
// - every call through its Durable Object binding (a method on a stub from `get` or
//   `getByName`, `fetch` included) is counted, and delayed by `--do-latency` first, standing in
//   for the network hop to wherever the object lives;
// - every alarm its Durable Object class runs is counted (the class is re-exported as a subclass),
//   and so is every request the Worker receives, so that calls per request are exact even with
//   requests in flight when a run stops;
// - `GET /__bench/counters` answers the counts. Objects and the Worker share one isolate in
//   workerd, so one set of module-level counters sees both sides.
import { writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'

/** What to wrap in a bundle. */
export interface Instrumented {
  /** The bundle's main module, in the same folder as the generated entry. */
  bundleFile: string
  /** The Durable Object binding the Worker calls through. */
  binding: string
  /** The Durable Object class the bundle exports under this name. */
  className: string
}

/** The counters a target reports at `GET /__bench/counters`. */
export interface Counters {
  /** Requests the Worker received (the counters endpoint aside). */
  requests: number
  durableObjectCalls: number
  alarms: number
  /** Instances of the limiter's object class constructed (a new key, or one evicted and back). */
  objectsStarted: number
}

/** Path of the counters endpoint; no target uses it for anything else. */
export const COUNTERS_PATH = '/__bench/counters'

/** The binding that sets the simulated hop, in ms (0: none). */
export const LATENCY_BINDING = 'BENCH_DO_LATENCY_MS'

/** Writes the instrumented entry beside the bundle and returns its path. */
export async function writeInstrumentedEntry(
  outdir: string,
  target: Instrumented
): Promise<string> {
  const path = join(outdir, 'bench-entry.js')
  await writeFile(path, entrySource(target))
  return path
}

/** Reads a running target's counters. */
export async function readCounters(url: string): Promise<Counters> {
  const response = await fetch(new URL(COUNTERS_PATH, url))
  if (!response.ok) throw new Error(`${COUNTERS_PATH} answered ${response.status}`)
  return (await response.json()) as Counters
}

function entrySource({ bundleFile, binding, className }: Instrumented): string {
  const inner = `./${basename(bundleFile)}`
  // Plain JavaScript for workerd: it is not bundled again.
  // Every other class the bundle exports (e.g. the live view's stats object) stays exported.
  return `import * as inner from ${JSON.stringify(inner)}
export * from ${JSON.stringify(inner)}

const counters = { requests: 0, durableObjectCalls: 0, alarms: 0, objectsStarted: 0 }
const BINDING = ${JSON.stringify(binding)}

// Stubs are proxies that answer any property name with an RPC method; 'then' must stay as the
// runtime has it (undefined), or awaiting a stub would call the object.
function wrapStub(stub, latencyMs) {
  return new Proxy(stub, {
    get(target, property) {
      const value = Reflect.get(target, property)
      if (typeof property !== 'string' || property === 'then' || typeof value !== 'function')
        return value
      return async (...args) => {
        counters.durableObjectCalls++
        if (latencyMs > 0) await scheduler.wait(latencyMs)
        return target[property](...args)
      }
    },
  })
}

function wrapNamespace(namespace, latencyMs) {
  return new Proxy(namespace, {
    get(target, property) {
      const value = Reflect.get(target, property)
      if (typeof value !== 'function') return value
      if (property === 'get' || property === 'getByName')
        return (...args) => wrapStub(target[property](...args), latencyMs)
      return value.bind(target)
    },
  })
}

// One wrapped env per env the runtime passes, so that caches keyed by env identity keep working.
const wrapped = new WeakMap()
function wrapEnv(env) {
  let result = wrapped.get(env)
  if (result === undefined) {
    const latencyMs = Number(env.${LATENCY_BINDING} ?? 0)
    result = { ...env, [BINDING]: wrapNamespace(env[BINDING], latencyMs) }
    wrapped.set(env, result)
  }
  return result
}

const Base = inner[${JSON.stringify(className)}]
export class ${className} extends Base {
  constructor(...args) {
    super(...args)
    counters.objectsStarted++
  }
}
if (typeof Base.prototype.alarm === 'function') {
  ${className}.prototype.alarm = function (...args) {
    counters.alarms++
    return Base.prototype.alarm.apply(this, args)
  }
}

const worker = inner.default
export default {
  fetch(request, env, ctx) {
    // A string test, not a URL parse: the wrapper's own cost is no limiter's.
    if (request.url.endsWith(${JSON.stringify(COUNTERS_PATH)})) return Response.json(counters)
    counters.requests++
    return worker.fetch(request, wrapEnv(env), ctx)
  },
}
`
}
