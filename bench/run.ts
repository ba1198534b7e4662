// `npm run bench [-- --duration <s> --connections <n> --bundle <path>]`: measures what the rate
// limiter adds on top of a bare pass-through Worker, both served by Miniflare on 127.0.0.1.
import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { cpus, platform, release, tmpdir, totalmem } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { cpuShare, cpuSnapshot } from './cpu-usage.ts'
import { ipSource, MANY_KEYS, measure, stopAll, warmUp, type KeyMode } from './load.ts'
import { baselineOf, compare, formatTable, type ScenarioResult } from './report.ts'
import {
  WANTED_COMPATIBILITY_DATE,
  buildBundle,
  compatibilityDate,
  startBare,
  startLimiter,
  startOrigin,
  type Origin,
  type RulesDocument,
  type Target,
} from './targets.ts'

type Scenario = { name: string; keys: KeyMode; rules?: RulesDocument }

const rulesWithLimit = (limit: number, path = '/*'): RulesDocument => ({
  version: 1,
  rules: [
    { id: 'bench', match: { path }, key: ['ip'], algorithm: 'sliding-window', limit, period: '1h' },
  ],
})

// Bare runs open and close the sequence so that drift over the run shows up as a difference.
const SCENARIOS: Scenario[] = [
  { name: 'bare (start)', keys: 'hot' },
  // The Worker's own share: rules are loaded and checked, but none matches, so no Durable Object.
  { name: 'no-match', keys: 'hot', rules: rulesWithLimit(1_000_000_000, '/elsewhere/*') },
  { name: 'hot-key', keys: 'hot', rules: rulesWithLimit(1_000_000_000) },
  { name: 'many-keys', keys: 'many', rules: rulesWithLimit(1_000_000_000) },
  { name: 'new-keys', keys: 'new', rules: rulesWithLimit(1_000_000_000) },
  { name: 'mostly-denied', keys: 'hot', rules: rulesWithLimit(10) },
  { name: 'bare (end)', keys: 'hot' },
]

const root = resolve(import.meta.dirname, '..')

// Miniflare keeps Durable Object and KV storage in SQLite files under the temp dir; on a disk
// that I/O, not the limiter, dominates. RAM is closer to what the code itself costs.
if (process.env.TMPDIR === undefined && existsSync('/dev/shm')) process.env.TMPDIR = '/dev/shm'
const OUTDIR = 'bench/.out'

const { duration, connections, bundle } = parseFlags()
const bundlePath = resolve(root, bundle ?? join(OUTDIR, 'index.js'))

// Whatever is running when the process is interrupted or fails, newest first.
const cleanups: Array<() => unknown> = []
let origin: Origin | undefined

async function cleanUp(): Promise<void> {
  stopAll()
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup()
    } catch (error) {
      console.error('cleanup failed:', error)
    }
  }
}

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping`)
    void cleanUp().finally(() => process.exit(code))
  })
}
// Last resort for paths that skip cleanUp; the origin also exits when its IPC channel closes.
process.once('exit', () => origin?.stop())

async function runScenario(
  scenario: Scenario,
  originUrl: string,
  originPid: number
): Promise<ScenarioResult> {
  const target: Target = scenario.rules
    ? await startLimiter(originUrl, bundlePath, scenario.rules)
    : await startBare(originUrl)
  const dispose = () => target.dispose()
  cleanups.push(dispose)
  try {
    // One source for warm-up and run: many-keys has met all its keys, new-keys never repeats one.
    const nextIp = ipSource(scenario.keys)
    await warmUp(target.url, nextIp, scenario.keys === 'many' ? MANY_KEYS : 0)
    const before = cpuSnapshot(originPid)
    const load = await measure(target.url, connections, duration, nextIp)
    return { name: scenario.name, ...load, cpu: cpuShare(before, cpuSnapshot(originPid)) }
  } finally {
    // Absent when an interrupt's cleanUp has already taken (and disposed) it.
    const index = cleanups.indexOf(dispose)
    if (index >= 0) {
      cleanups.splice(index, 1)
      await dispose()
    }
  }
}

async function main(): Promise<void> {
  const machine = {
    cpus: cpus().length,
    model: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    os: `${platform()} ${release()}`,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    storageDir: tmpdir(),
  }
  console.log(
    `machine: ${machine.cpus} x ${machine.model}, node ${machine.node}, ${machine.os}, ${machine.memoryGiB} GiB`
  )
  console.log(
    `load: ${connections} connections x ${duration} s per scenario, from 127.0.0.1 via autocannon`
  )
  // Miniflare keeps Durable Object and KV storage in SQLite files under the temp dir, even when not
  // persisting, so the disk behind it shows up in the limiter numbers.
  console.log(`storage: Miniflare temp dirs under ${machine.storageDir} (set TMPDIR to choose)`)
  if (compatibilityDate !== WANTED_COMPATIBILITY_DATE) {
    console.log(
      `note: miniflare's workerd only supports compatibility dates up to ${compatibilityDate}; using it instead of ${WANTED_COMPATIBILITY_DATE}`
    )
  }

  if (bundle === undefined) {
    console.log('building: wrangler deploy --dry-run --outdir bench/.out')
    await buildBundle(root, OUTDIR)
  }
  origin = await startOrigin()
  const { pid } = origin
  cleanups.push(() => origin?.stop())

  const results: ScenarioResult[] = []
  for (const scenario of SCENARIOS) {
    const result = await runScenario(scenario, origin.url, pid)
    console.log(
      `  ${scenario.name}: ${result.requests} requests, ${result.rps.toFixed(0)} req/s, status ${JSON.stringify(result.statusCodes)}`
    )
    results.push(result)
  }

  const baseline = baselineOf(results.filter((result) => result.name.startsWith('bare')))
  console.log(`\n${formatTable(results, baseline)}`)
  console.log(
    '\nx bare = req/s over the mean bare req/s; +p50/+p99 = latency added over the mean bare run;'
  )
  console.log(
    'cpu% = percent of one core used by autocannon / the origin / workerd / everything else on the host.'
  )
  const noise = Math.max(...results.map((result) => result.cpu?.other ?? 0))
  if (noise > 25)
    console.log(
      `note: something else used up to ${noise}% of a core during a run; expect noisy numbers`
    )

  const report = {
    generatedAt: new Date().toISOString(),
    machine,
    options: { duration, connections, compatibilityDate, bundle: bundlePath },
    baseline,
    scenarios: results.map((result) => ({ ...result, ...compare(result, baseline) })),
  }
  // Microsecond precision is plenty and keeps the file readable.
  const rounded = JSON.stringify(
    report,
    (_key, value) => (typeof value === 'number' ? Math.round(value * 1000) / 1000 : value),
    2
  )
  await writeFile(join(root, 'bench/results.json'), `${rounded}\n`)
  console.log('\nwrote bench/results.json')
}

function parseFlags(): { duration: number; connections: number; bundle?: string } {
  try {
    const { values } = parseArgs({
      options: {
        duration: { type: 'string', default: '10' },
        connections: { type: 'string', default: '50' },
        // A prebuilt bundle to measure instead of building src/.
        bundle: { type: 'string' },
      },
    })
    return {
      duration: positiveInteger('duration', values.duration),
      connections: positiveInteger('connections', values.connections),
      bundle: values.bundle,
    }
  } catch (error) {
    console.error(
      `${error instanceof Error ? error.message : error}\nusage: npm run bench -- [--duration <s>] [--connections <n>] [--bundle <path>]`
    )
    process.exit(2)
  }
}

function positiveInteger(name: string, value: string): number {
  const number = Number(value)
  if (!Number.isInteger(number) || number < 1)
    throw new Error(`--${name} must be a positive integer, got ${value}`)
  return number
}

try {
  await main()
} catch (error) {
  console.error(error)
  process.exitCode = 1
} finally {
  await cleanUp()
}
