// `npm run bench [-- --help]`: the rate limiter beside a naive Durable Object limiter and
// hono-rate-limiter's Durable Object store, each compared with a bare pass-through Worker in
// the same run, all served by Miniflare (workerd) on 127.0.0.1 and loaded with autocannon.
import { existsSync } from 'node:fs'
import { cpus, platform, release, tmpdir, totalmem } from 'node:os'
import { resolve } from 'node:path'
import { runAlarmCost, runAlarmsDue } from './alarms.ts'
import { buildLimiter, unavailable, type LimiterName } from './limiters.ts'
import { stopAll } from './load.ts'
import { parseOptions } from './options.ts'
import { describeRecord, writeReport } from './output.ts'
import { BARE } from './report.ts'
import {
  runExactness,
  runLoad,
  type RunContext,
  type RunRecord,
  type TargetName,
} from './runner.ts'
import { alarmPeriodS, SCENARIOS, type Scenario } from './scenarios.ts'
import {
  WANTED_COMPATIBILITY_DATE,
  compatibilityDate,
  startOrigin,
  type Origin,
} from './targets.ts'

const root = resolve(import.meta.dirname, '..')
const OUTDIR = 'bench/.out'

// Miniflare keeps Durable Object and KV storage in SQLite files under the temp dir; on a disk
// that I/O, not the limiter, dominates. RAM is closer to what the code itself costs.
if (process.env.TMPDIR === undefined && existsSync('/dev/shm')) process.env.TMPDIR = '/dev/shm'

const options = parseOptions()

// Whatever is running when the process is interrupted or fails.
const disposers = new Set<() => Promise<void>>()
let origin: Origin | undefined

async function cleanUp(): Promise<void> {
  stopAll()
  for (const dispose of [...disposers]) {
    disposers.delete(dispose)
    await dispose().catch((error) => console.error('cleanup failed:', error))
  }
  origin?.stop()
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

async function buildAll(): Promise<Pick<RunContext, 'entries' | 'unavailable'>> {
  const entries: RunContext['entries'] = {}
  const missing: RunContext['unavailable'] = {}
  for (const name of options.targets) {
    const prebuilt =
      name === 'project' ? options.bundle : name === 'peer' ? options.peerBundle : undefined
    const why = prebuilt === undefined ? unavailable(name, root) : undefined
    if (why !== undefined) {
      missing[name] = why
      console.log(`skipping ${name}: ${why}`)
      continue
    }
    console.log(`building ${name}${prebuilt ? ` (prebuilt ${prebuilt})` : ''}`)
    entries[name] = await buildLimiter(name, root, OUTDIR, prebuilt && resolve(prebuilt))
  }
  return { entries, unavailable: missing }
}

/** Rotates the limiters by rep, so that none always runs first after bare. */
function order(rep: number): LimiterName[] {
  const shift = (rep - 1) % options.targets.length
  return [...options.targets.slice(shift), ...options.targets.slice(0, shift)]
}

async function runScenario(
  context: RunContext,
  scenario: Scenario,
  target: TargetName,
  rep: number,
  periodS: number
): Promise<RunRecord> {
  switch (scenario.kind) {
    case 'load':
      return runLoad(context, scenario, target, rep)
    case 'alarms-due':
      return runAlarmsDue(context, scenario, target, rep, periodS)
    case 'alarm-cost':
      return runAlarmCost(context, scenario, target, rep, periodS)
    case 'exactness':
      return runExactness(context, scenario, target, rep)
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
  console.log(`machine: ${machine.cpus} x ${machine.model}, node ${machine.node}, ${machine.os}`)
  console.log(
    `load: ${options.connections} connections x ${options.duration} s${options.rate ? ` at ${options.rate} req/s` : ''}, ${options.reps} rep(s), ${options.keys} keys, Durable Object hop ${options.latencyMs} ms`
  )
  console.log(`storage: Miniflare temp dirs under ${machine.storageDir} (set TMPDIR to choose)`)
  if (compatibilityDate !== WANTED_COMPATIBILITY_DATE)
    console.log(`note: using compatibility date ${compatibilityDate} (workerd's newest)`)

  const built = await buildAll()
  origin = await startOrigin()
  const context: RunContext = {
    origin,
    ...built,
    duration: options.duration,
    connections: options.connections,
    rate: options.rate,
    keys: options.keys,
    latencyMs: options.latencyMs,
    track: (target) => {
      const dispose = () => target.dispose()
      disposers.add(dispose)
      return () => disposers.delete(dispose)
    },
  }
  const selected = SCENARIOS.filter((s) => options.scenarios.includes(s.name))
  const bare: Scenario = { name: BARE, kind: 'load', keys: 'hot', spec: { limit: 1, periodS: 1 } }
  const records: RunRecord[] = []
  const record = (r: RunRecord) => {
    records.push(r)
    console.log(`  rep ${r.rep} ${r.scenario} / ${r.target}: ${describeRecord(r)}`)
  }
  let creationSeconds: number | undefined
  for (let rep = 1; rep <= options.reps; rep++) {
    // Bare opens and closes each rep; their mean is that rep's baseline.
    record(await runLoad(context, bare, 'bare', rep))
    for (const scenario of selected) {
      if (scenario.once && rep > 1) continue
      for (const target of order(rep)) {
        const result = await runScenario(
          context,
          scenario,
          target,
          rep,
          alarmPeriodS(creationSeconds)
        )
        record(result)
        if (scenario.name === 'many-keys' && typeof result.details?.warmUpSeconds === 'number')
          creationSeconds = Math.max(creationSeconds ?? 0, result.details.warmUpSeconds)
      }
    }
    record(await runLoad(context, bare, 'bare', rep))
  }
  await writeReport(root, records, machine, options)
}

try {
  await main()
} catch (error) {
  console.error(error)
  process.exitCode = 1
} finally {
  await cleanUp()
}
