// The processes a benchmark needs: the Worker bundles, the origin child and the Miniflare
// instances that load is pointed at. `npm run fuzz` builds and serves the limiter the same way.
import { fork, spawn } from 'node:child_process'
import { readdir, rm } from 'node:fs/promises'
import { delimiter, dirname, join } from 'node:path'
import { Miniflare, supportedCompatibilityDate } from 'miniflare'

/** The compatibility date of wrangler.toml. */
export const WANTED_COMPATIBILITY_DATE = '2026-10-23'

/**
 * The date the targets run with: the wanted one, unless the workerd bundled with miniflare is
 * older and would refuse to start (an explicit MINIFLARE_WORKERD_PATH is trusted as is).
 */
export const compatibilityDate =
  process.env.MINIFLARE_WORKERD_PATH !== undefined ||
  WANTED_COMPATIBILITY_DATE <= supportedCompatibilityDate
    ? WANTED_COMPATIBILITY_DATE
    : supportedCompatibilityDate

/** A running Worker that load can be pointed at. */
export interface Target {
  /** Base URL on 127.0.0.1, ending in a slash. */
  url: string
  dispose: () => Promise<void>
}

/** The origin child process. */
export interface Origin {
  url: string
  pid: number
  stop: () => void
}

/** A rules document as the Worker reads it from the `rules` key of the RULES namespace. */
export type RulesDocument = { version: number; rules: unknown[] }

/** Miniflare's Durable Object binding of a target: its class and storage backend. */
export type DurableObjectBinding = { className: string; useSQLite: boolean }

// Miniflare otherwise logs every request through its Node loopback server, which would put
// the parent's event loop (shared with autocannon) on the request path.
const SHARED_OPTIONS = { host: '127.0.0.1', port: 0, cf: false, logRequests: false } as const

const BARE_SCRIPT = `export default {
  fetch(request, env) {
    const url = new URL(request.url)
    return fetch(new Request(env.ORIGIN + url.pathname + url.search, request), { redirect: 'manual' })
  },
}`

/**
 * Runs `wrangler deploy --dry-run` so that `outdir` holds the bundle that would deploy, and
 * returns the path of its main module (named after the config's `main`).
 *
 * @param root - the project root (wrangler runs there)
 * @param outdir - relative to `root`; emptied first
 * @param config - a wrangler config other than the root's, relative to `root`
 * @param extraArgs - more `wrangler deploy` flags (the profiler turns minification off)
 */
export async function buildBundle(
  root: string,
  outdir: string,
  config?: string,
  extraArgs: string[] = []
): Promise<string> {
  await rm(join(root, outdir), { recursive: true, force: true })
  // wrangler's `#!/usr/bin/env node` must resolve to this Node (22), not the older system one.
  const env = {
    ...process.env,
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    WRANGLER_SEND_METRICS: 'false',
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
  }
  const wrangler = join(root, 'node_modules/.bin/wrangler')
  const configArgs = config === undefined ? [] : ['--config', config]
  // Absolute: with --config, wrangler resolves a relative outdir against the config's folder.
  const child = spawn(
    wrangler,
    ['deploy', '--dry-run', '--outdir', join(root, outdir), ...configArgs, ...extraArgs],
    {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    }
  )
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const code = await new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('close', resolve)
  })
  if (code !== 0) throw new Error(`wrangler deploy --dry-run failed (exit ${code}):\n${output}`)
  const main = (await readdir(join(root, outdir))).find((name) => name.endsWith('.js'))
  if (main === undefined) throw new Error(`wrangler wrote no .js module to ${outdir}`)
  return join(root, outdir, main)
}

/** Starts the origin (bench/origin.ts) in a child process and waits for its port. */
export async function startOrigin(): Promise<Origin> {
  const child = fork(join(import.meta.dirname, 'origin.ts'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve(message.port))
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`origin exited early (code ${code})`)))
  })
  if (child.pid === undefined || !port) throw new Error('origin did not report a port')
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, stop: () => child.kill() }
}

/** Starts the pass-through Worker that only forwards to the origin: the baseline. */
export async function startBare(origin: string, inspectorPort?: number): Promise<Target> {
  const mf = new Miniflare({
    ...SHARED_OPTIONS,
    inspectorPort,
    modules: true,
    script: BARE_SCRIPT,
    compatibilityDate,
    bindings: { ORIGIN: origin },
  })
  return { url: (await mf.ready).href, dispose: () => mf.dispose() }
}

/**
 * Miniflare options that serve the built limiter bundle: its Durable Object class as `LIMITER`
 * and an empty `RULES` namespace, with `bindings` as vars. No host, port or logging choices.
 *
 * @param bundlePath - `index.js` of {@link buildBundle}'s output, or an entry importing it
 * @param bindings - vars and secrets
 */
export function limiterWorkerOptions(bundlePath: string, bindings: Record<string, string>) {
  return {
    scriptPath: bundlePath,
    // Module names are paths relative to this root; a bundle outside the cwd would contain "..".
    modulesRoot: dirname(bundlePath),
    modules: true,
    compatibilityDate,
    durableObjects: {
      LIMITER: { className: 'RateLimiterObject', useSQLite: true },
      LIMITER_STATS: { className: 'LiveStatsObject', useSQLite: true },
    },
    kvNamespaces: ['RULES'],
    bindings,
  }
}

/**
 * Starts a Worker module (and the modules it imports) with one Durable Object binding and
 * `bindings` as vars. Fresh: empty Durable Object and KV state, a new isolate.
 *
 * @param entryPath - the main module
 * @param durableObjects - binding name to class and storage backend
 * @param bindings - vars and secrets
 * @param inspectorPort - open workerd's inspector there (the profiler's)
 */
export async function startWorker(
  entryPath: string,
  durableObjects: Record<string, DurableObjectBinding>,
  bindings: Record<string, string>,
  inspectorPort?: number
): Promise<Target> {
  const mf = new Miniflare({
    ...SHARED_OPTIONS,
    inspectorPort,
    ...limiterWorkerOptions(entryPath, bindings),
    // Modules the entry imports are CommonJS to Miniflare unless they end in .mjs; wrangler's are ES.
    modulesRules: [{ type: 'ESModule', include: ['**/*.js'] }],
    durableObjects,
  })
  try {
    return { url: (await mf.ready).href, dispose: () => mf.dispose() }
  } catch (error) {
    await mf.dispose()
    throw error
  }
}
