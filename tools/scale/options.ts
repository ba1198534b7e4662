/**
 * @module tools/scale/options
 * The scale simulator's command line. Flags that take a list (comma-separated) run every
 * combination, one run each. Parsed by hand, so that the tests can read it in workerd too.
 */
import type { FailMode } from '../../src/types'
import { MACHINE_KINDS, type MachineKind } from './clocks'
import type { Mode } from './limiter-adapter'
import { DEFAULT_WORLD, IDEAL_WORLD, type RunOptions, type SimWorld } from './run-options'
import { EDITS, type EditKind } from './versions'
import {
  ALGORITHMS,
  DEFAULT_DEMAND,
  SCENARIOS,
  type AlgorithmName,
  type ScenarioName,
} from './scenarios'

/** The help text: one line per option. */
export const USAGE = `usage: npm run simulate:scale -- [options]     (lists: a,b,c run every combination)

  --scenario <names>    ${Object.keys(SCENARIOS).join(', ')} (default steady)
  --mode <names>        leased or exact (default leased)
  --algorithm <names>   ${ALGORITHMS.join(', ')} (default sliding-window)
  --isolates <counts>   isolates alive at once (default 3000)
  --locations <n>       locations (default: the isolates, at most 300)
  --demand <x>          demand as a multiple of the limit's rate (default 1; shift 1.1)
  --seconds <n>         virtual seconds (default 180)
  --seed <n>            seeds traffic and churn (default 1)
  --service-ms <ms>     time one call occupies an object (default 1)
  --queue-bound <n>     calls that may wait at an object before "overloaded" (default 100)
  --isolate-life <s>    mean isolate lifetime, 0 for no churn (default 300)
  --restart-ms <ms>     how long a restarting object is unavailable (default 200)
  --warmup <s>          seconds left out of rates, shares and percentiles (default 10)
  --fail-mode <mode>    open or closed: what a request gets when no decision can be had (default open)
  --burst <s>           token bucket and GCRA: the burst, in seconds of the rate (default: the
                        limit, as for a rule without "burst": 60 s for steady, 1 s for small-key)

The world (defaults as unkind as the real one; --ideal-world for none of it):
  --skew <ms-list>      each machine's clock off by up to ±ms (default ${DEFAULT_WORLD.clocks.skewMs});
                        +ms or -ms: each exactly that far ahead or behind
  --skew-on <kinds>     whose clocks are off: ${MACHINE_KINDS.join(',')} (default all)
  --drift <ppm>         each clock drifts by up to ±ppm (default ${DEFAULT_WORLD.clocks.driftPpm})
  --edit <kinds>        an edit of the rule while the run lasts (default ${DEFAULT_WORLD.edit}):
${Object.entries(EDITS)
  .map(([name, what]) => `                          ${name}: ${what}`)
  .join('\n')}
  --edit-at <s>         when the edit is made (default: half the run)
  --propagation <s>     how long both versions are in use (default ${DEFAULT_WORLD.propagationS})
  --lost-answers <xs>   share of calls whose answer is lost after they ran (default ${DEFAULT_WORLD.lostAnswers})
  --tiers <counts>      tiers mixed on the key, limits 1/n, 2/n, … of the rule's (default 1)
  --deploy-at <s>       a deploy then: every isolate and object instance replaced (default none)
  --ideal-world         no skew, no edit, no lost answers (what earlier runs assumed)

  --out <dir>           write a CSV and an SVG chart per run there
  --json                print one JSON object per run instead of the table
  --check               CI's short form: short runs of each finding that fail on any over-admission
  --help                print this

Exit status: 0, or 1 when a run admitted more than the exact limit allows, 2 for a bad flag.`

/** A problem with the command line: exit 2. */
export class UsageError extends Error {}

/** What the command line asked for. */
export interface Command {
  runs: RunOptions[]
  json: boolean
  out?: string
  help: boolean
}

/**
 * Reads the flags.
 *
 * @param argv - the arguments after the script name
 * @throws {UsageError} naming the flag, for an unknown flag or a bad value
 */
export function readCommand(argv: string[]): Command {
  const values: Record<string, string | boolean | undefined> = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`)
    const [flag, inline] = arg.slice(2).split(/=(.*)/s) as [string, string | undefined]
    if (SWITCHES.has(flag)) {
      if (inline !== undefined) throw new UsageError(`--${flag} takes no value`)
      values[flag] = true
    } else if (VALUE_FLAGS.has(flag)) {
      const value = inline ?? argv[++i]
      if (value === undefined || value.startsWith('--'))
        throw new UsageError(`--${flag} needs a value`)
      values[flag] = value
    } else throw new UsageError(`unknown flag --${flag}`)
  }
  return command(values)
}

const VALUE_FLAGS = new Set([
  'scenario',
  'mode',
  'algorithm',
  'isolates',
  'locations',
  'demand',
  'seconds',
  'seed',
  'service-ms',
  'queue-bound',
  'isolate-life',
  'restart-ms',
  'warmup',
  'fail-mode',
  'burst',
  'out',
  'skew',
  'skew-on',
  'drift',
  'edit',
  'edit-at',
  'propagation',
  'lost-answers',
  'tiers',
  'deploy-at',
])
const SWITCHES = new Set(['json', 'check', 'help', 'ideal-world'])

function command(values: Record<string, string | boolean | undefined>): Command {
  const text = (flag: string) => values[flag] as string | undefined
  const help = values.help === true
  const json = values.json === true
  const out = text('out')
  if (values.check === true) return { runs: checkRuns(), json, help, ...(out ? { out } : {}) }
  const scenarios = list('scenario', text('scenario') ?? 'steady', oneOf(Object.keys(SCENARIOS)))
  const modes = list('mode', text('mode') ?? 'leased', oneOf(['leased', 'exact']))
  const algorithms = list('algorithm', text('algorithm') ?? 'sliding-window', oneOf(ALGORITHMS))
  const isolates = list('isolates', text('isolates') ?? '3000', whole(1, 100_000))
  const demands =
    text('demand') === undefined
      ? [undefined]
      : list('demand', text('demand')!, decimal(0.001, 100))
  const locations = optional('locations', text('locations'), whole(1, 300))
  const seconds = whole(1, 3600)('--seconds', text('seconds') ?? '180')
  const base = {
    seconds,
    seed: whole(0, 2 ** 32 - 1)('--seed', text('seed') ?? '1'),
    serviceMs: decimal(0.001, 1000)('--service-ms', text('service-ms') ?? '1'),
    queueBound: whole(0, 1_000_000)('--queue-bound', text('queue-bound') ?? '100'),
    meanLifeS: lifetime(text('isolate-life') ?? '300'),
    restartMs: whole(0, 600_000)('--restart-ms', text('restart-ms') ?? '200'),
    warmupS: Math.min(whole(0, 3600)('--warmup', text('warmup') ?? '10'), seconds - 1),
    failMode: oneOf(['open', 'closed'])('--fail-mode', text('fail-mode') ?? 'open') as FailMode,
    ...(text('burst') === undefined
      ? {}
      : { burstS: decimal(0.001, 86_400)('--burst', text('burst')!) }),
  }
  const worlds = worldsOf(values, seconds)
  const runs: RunOptions[] = []
  for (const scenario of scenarios)
    for (const mode of modes)
      for (const algorithm of algorithms)
        for (const count of isolates)
          for (const demand of demands)
            for (const world of worlds) {
              const where = locations ?? Math.min(300, count)
              if (where > count)
                throw new UsageError(`--locations (${where}) must not exceed --isolates (${count})`)
              runs.push({
                ...base,
                scenario: scenario as ScenarioName,
                mode: mode as Mode,
                algorithm: algorithm as AlgorithmName,
                isolates: count,
                locations: where,
                demand: demand ?? DEFAULT_DEMAND[scenario as ScenarioName],
                world,
              })
            }
  return { runs, json, help, ...(out ? { out } : {}) }
}

/**
 * The worlds the flags describe: the default, or the ideal one, with the flags given on top;
 * one for each combination of the lists given (`--skew`, `--edit`, `--tiers`, `--lost-answers`).
 */
function worldsOf(
  values: Record<string, string | boolean | undefined>,
  seconds: number
): SimWorld[] {
  const text = (flag: string) => values[flag] as string | undefined
  const base = values['ideal-world'] === true ? IDEAL_WORLD : DEFAULT_WORLD
  const each = <T>(flag: string, parse: Parse<T>, fallback: T): T[] => {
    const value = text(flag)
    return value === undefined ? [fallback] : list(flag, value, parse)
  }
  const skewOn = text('skew-on')
  const editAt = text('edit-at')
  const deployAt = text('deploy-at')
  const edited = text('edit') !== undefined
  const worlds: SimWorld[] = []
  for (const skew of each('skew', signedDecimal(60_000), { ms: base.clocks.skewMs, fixed: false }))
    for (const edit of each('edit', oneOf(Object.keys(EDITS)), base.edit))
      for (const tiers of each('tiers', whole(1, 10), base.tiers))
        for (const lostAnswers of each('lost-answers', decimal(0, 1), base.lostAnswers)) {
          if (edit === 'tier' && tiers < 2)
            throw new UsageError('--edit tier needs --tiers 2 or more')
          const propagation = optional('propagation', text('propagation'), decimal(0, 3600))
          worlds.push({
            clocks: {
              skewMs: skew.ms,
              ...(skew.fixed ? { fixed: true } : {}),
              driftPpm:
                optional('drift', text('drift'), decimal(0, 10_000)) ?? base.clocks.driftPpm,
              // Skew asked of an ideal world is every machine's unless said.
              skewOn:
                skewOn !== undefined
                  ? (list('skew-on', skewOn, oneOf(MACHINE_KINDS)) as MachineKind[])
                  : base.clocks.skewOn.length === 0 && text('skew') !== undefined
                    ? MACHINE_KINDS
                    : base.clocks.skewOn,
            },
            tiers,
            edit: edit as EditKind,
            // An edit asked of an ideal world propagates as the default world's does.
            propagationS:
              propagation ??
              (edited && base === IDEAL_WORLD ? DEFAULT_WORLD.propagationS : base.propagationS),
            lostAnswers,
            ...(editAt === undefined ? {} : { editAtS: decimal(0, seconds)('--edit-at', editAt) }),
            ...(deployAt === undefined
              ? {}
              : { deployAtS: decimal(0, seconds)('--deploy-at', deployAt) }),
          })
        }
  return worlds
}

/**
 * CI's form: 100 isolates for 10 s above the limit; 10 isolates for 65 s above it, across the
 * first window's end (the limit binding, the next window's ramp); the small key 20 s at 3 ×
 * its limit; and a token bucket (a burst of 5 s) for 10 s at 3 × its rate, spent by 2.5 s and
 * refilled from its lessees' reports of what they spent.
 */
function checkRuns(): RunOptions[] {
  const common = {
    mode: 'leased' as const,
    algorithm: 'sliding-window' as const,
    isolates: 100,
    locations: 100,
    seconds: 20,
    seed: 1,
    serviceMs: 1,
    queueBound: 100,
    meanLifeS: 300,
    restartMs: 200,
    warmupS: 5,
    failMode: 'open' as const,
    world: DEFAULT_WORLD,
  }
  return [
    { ...common, scenario: 'steady', demand: 1.1, seconds: 10 },
    { ...common, scenario: 'steady', demand: 1.1, seconds: 65, isolates: 10, locations: 10 },
    { ...common, scenario: 'small-key', demand: 3 },
    {
      ...common,
      scenario: 'steady',
      algorithm: 'token-bucket',
      burstS: 5,
      demand: 3,
      seconds: 10,
      isolates: 10,
      locations: 10,
    },
    // One short run per way the world is unkind (each over-admitted or thrashed before).
    ...findingRuns({ ...common, scenario: 'steady', isolates: 10, locations: 10, seconds: 30 }),
  ]
}

/** A rule edit of each kind, tiers mixed on the key, clocks a second off, lost answers, a deploy. */
function findingRuns(base: Omit<RunOptions, 'demand'>): RunOptions[] {
  const world = (change: Partial<SimWorld>): SimWorld => ({
    ...DEFAULT_WORLD,
    editAtS: 12,
    propagationS: 10,
    ...change,
  })
  const second = (skewMs: number): SimWorld =>
    world({ clocks: { skewMs, fixed: true, driftPpm: 0, skewOn: ['location'] } })
  return [
    // At 3× the rate a minute's limit binds from 20 s: while the versions overlap, and after.
    { ...base, demand: 3, world: world({ edit: 'period' }) },
    { ...base, demand: 3, algorithm: 'fixed-window', world: world({ edit: 'algorithm' }) },
    { ...base, demand: 0.5, world: world({ tiers: 2, edit: 'tier' }) },
    { ...base, demand: 3, algorithm: 'fixed-window', world: second(1000) },
    { ...base, demand: 3, algorithm: 'gcra', burstS: 5, world: second(-1000) },
    { ...base, demand: 3, world: world({ lostAnswers: 0.05, edit: 'none' }) },
    { ...base, demand: 3, world: world({ deployAtS: 22 }) },
  ]
}

type Parse<T> = (flag: string, value: string) => T

function list<T>(flag: string, value: string, parse: Parse<T>): T[] {
  return value.split(',').map((item) => parse(`--${flag}`, item.trim()))
}

function optional<T>(flag: string, value: string | undefined, parse: Parse<T>): T | undefined {
  return value === undefined ? undefined : parse(`--${flag}`, value)
}

function oneOf(allowed: readonly string[]): Parse<string> {
  return (flag, value) => {
    if (!allowed.includes(value))
      throw new UsageError(`${flag} must be one of ${allowed.join(', ')}, not "${value}"`)
    return value
  }
}

function whole(min: number, max: number): Parse<number> {
  return (flag, value) => {
    const n = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN
    if (!(n >= min && n <= max))
      throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, not "${value}"`)
    return n
  }
}

/** `ms` for up to ±ms; `+ms` or `-ms` for exactly that. */
function signedDecimal(max: number): Parse<{ ms: number; fixed: boolean }> {
  return (flag, value) => {
    const sign = value.startsWith('-') ? -1 : 1
    const fixed = value.startsWith('+') || value.startsWith('-')
    const ms = decimal(0, max)(flag, fixed ? value.slice(1) : value)
    return { ms: sign * ms, fixed }
  }
}

function decimal(min: number, max: number): Parse<number> {
  return (flag, value) => {
    const n = /^[0-9]*\.?[0-9]+$/.test(value) ? Number(value) : Number.NaN
    if (!(n >= min && n <= max))
      throw new UsageError(`${flag} must be a number from ${min} to ${max}, not "${value}"`)
    return n
  }
}

function lifetime(value: string): number {
  const seconds = whole(0, 86_400)('--isolate-life', value)
  return seconds === 0 ? Number.POSITIVE_INFINITY : seconds
}
