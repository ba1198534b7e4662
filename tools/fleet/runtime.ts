/**
 * @module tools/fleet/runtime
 * The fleet in one workerd, through Miniflare: an `objects` Worker that declares the limiter's
 * Durable Object classes (all the key's objects run in its isolate) and `isolates` Workers of the
 * same bundle, each its own isolate, that bind those classes by `scriptName`, so that all share
 * one object namespace. Each isolate reads the rules from its group's KV namespace (group `a` or
 * `b`: the edit scenario writes them apart, standing for KV's propagation). Storage is kept on
 * disk, so a restart of the runtime (a deploy) loses every isolate and in-memory tier and keeps
 * what the objects stored.
 */
import { createServer } from 'node:net'
import { dirname } from 'node:path'
import type { Readable } from 'node:stream'
import { Miniflare, type MiniflareOptions, type WorkerOptions } from 'miniflare'
import { compatibilityDate } from '../../bench/targets'
import { FLEET_PREFIX, SELF_BINDING, WORLD_BINDING, type CallCounts, type HopTable } from './entry'

/** The Worker that holds the objects. */
export const OBJECTS_WORKER = 'objects'

/** The admin token of the fleet's Workers. */
export const ADMIN_TOKEN = 'fleet-admin-token'

/** The rules' KV group of an isolate: the first half reads `a`, the rest `b`. */
export type RulesGroup = 'a' | 'b'

/** What the fleet runs. */
export interface RuntimeSpec {
  /** The entry module (`entry.ts`) beside the bundle. */
  entryPath: string
  /** Each isolate's location. */
  isolateAt: readonly number[]
  hops: HopTable
  /** Where storage is kept across restarts. */
  persistDir: string
  /** Seconds between an isolate's reads of the rules. */
  rulesRefreshS: number
}

/** The running fleet. */
export interface Runtime {
  /** Base URL of Miniflare's entry on 127.0.0.1. */
  url: string
  /** Base URL of workerd's inspector (one target per Worker). */
  inspectorUrl: string
  /** An isolate's Worker name. */
  isolateName(index: number): string
  /** An isolate's rules group. */
  groupOf(index: number): RulesGroup
  /** Writes a rules document to a group's KV namespace. */
  putRules(group: RulesGroup, document: unknown): Promise<void>
  /** Restarts the runtime with the same options: every isolate and in-memory state lost. */
  restart(): Promise<void>
  /** Calls per second counted in each Worker (the objects' and every isolate's). */
  counters(): Promise<CallCounts[]>
  /** Sets a fault on the calls to the root, in every Worker. */
  fault(fault: object): Promise<void>
  dispose(): Promise<void>
}

/**
 * Starts the fleet.
 *
 * @param spec - what to run
 */
export async function startRuntime(spec: RuntimeSpec): Promise<Runtime> {
  const port = await freePort()
  const inspectorPort = await freePort()
  const names = [OBJECTS_WORKER, ...spec.isolateAt.map((_, i) => `isolate-${i}`)]
  const groupOf = (i: number): RulesGroup => (i < spec.isolateAt.length / 2 ? 'a' : 'b')
  const options: MiniflareOptions = {
    host: '127.0.0.1',
    port,
    cf: false,
    logRequests: false,
    // The limiter's log lines (rules loaded, fail-opens) are not the harness's output.
    handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
      stdout.resume()
      stderr.pipe(process.stderr)
    },
    inspectorPort,
    durableObjectsPersist: `${spec.persistDir}/do`,
    kvPersist: `${spec.persistDir}/kv`,
    workers: [
      worker(spec, OBJECTS_WORKER, 0, 'a', true),
      ...spec.isolateAt.map((at, i) => worker(spec, names[i + 1]!, at, groupOf(i), false)),
    ],
  }
  let mf = new Miniflare(options)
  const url = (await mf.ready).href
  const each = (path: string, init?: RequestInit) =>
    Promise.all(
      names.map(async (name) => {
        const response = await fetch(new URL(`${FLEET_PREFIX}${path}`, url), {
          ...init,
          headers: { 'MF-Route-Override': name },
        })
        if (!response.ok) throw new Error(`${name} ${path}: ${response.status}`)
        return response.json()
      })
    )
  return {
    url,
    inspectorUrl: `http://127.0.0.1:${inspectorPort}`,
    isolateName: (i) => names[i + 1]!,
    groupOf,
    async putRules(group, document) {
      const kv = await mf.getKVNamespace('RULES', group === 'a' ? OBJECTS_WORKER : names.at(-1))
      await kv.put('rules', JSON.stringify(document))
    },
    async restart() {
      await mf.dispose()
      mf = new Miniflare(options)
      await mf.ready
    },
    counters: () => each('counters') as Promise<CallCounts[]>,
    async fault(fault) {
      await each('fault', { method: 'POST', body: JSON.stringify(fault) })
    },
    dispose: () => mf.dispose(),
  }
}

function worker(
  spec: RuntimeSpec,
  name: string,
  location: number,
  group: RulesGroup,
  holdsObjects: boolean
): WorkerOptions {
  const objects = (className: string) =>
    holdsObjects
      ? { className, useSQLite: true }
      : { className, useSQLite: true, scriptName: OBJECTS_WORKER }
  return {
    name,
    scriptPath: spec.entryPath,
    // Module names are paths relative to this root; a bundle outside the cwd would contain "..".
    modulesRoot: dirname(spec.entryPath),
    modules: true,
    // Modules the entry imports are CommonJS to Miniflare unless they end in .mjs; wrangler's are ES.
    modulesRules: [{ type: 'ESModule', include: ['**/*.js'] }],
    compatibilityDate,
    durableObjects: {
      LIMITER: objects('RateLimiterObject'),
      LIMITER_STATS: objects('LiveStatsObject'),
    },
    kvNamespaces: { RULES: `rules-${group}` },
    bindings: {
      ORIGIN: 'demo',
      // Decisions are not counted for the live view: its flushes are not the limiter's tiers.
      METRICS: 'off',
      RULES_REFRESH_SECONDS: String(spec.rulesRefreshS),
      LIMITER_TIMEOUT_MS: '1000',
      ADMIN_TOKEN,
      [WORLD_BINDING]: JSON.stringify(spec.hops),
      [SELF_BINDING]: String(location),
    },
  }
}

/** A port free now on 127.0.0.1: a restart must come back on the same one. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port'))
      )
    })
  })
}
