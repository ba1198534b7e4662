/**
 * @module tools/scale/options
 * The scale simulator's command line. Options that take a list (comma-separated) run every
 * combination, one run each. Read by `cli/command-line.ts`, which is pure, so that the tests
 * read it in workerd too.
 */
import type { FailMode } from '../../src/types'
import { MACHINE_KINDS, type MachineKind } from './clocks'
import type { Mode } from './limiter-adapter'
import { DEFAULT_WORLD, IDEAL_WORLD, type RunOptions, type SimWorld } from './run-options'
import { EDITS, type EditKind } from './versions'
import { readCommandLine, UsageError, type CommandSpec } from '../cli/command-line'
import {
  ALGORITHMS,
  DEFAULT_DEMAND,
  SCENARIOS,
  type AlgorithmName,
  type ScenarioName,
} from './scenarios'

/** The scale simulator's command line, as `--help` prints it. */
export const SCALE: CommandSpec = {
  usage: ['npm run simulate:scale -- [options]'],
  about:
    'Simulates one key at scale: isolates, locations and their Durable Objects in virtual time. ' +
    'Options that take a list (a,b,c) run every combination, one run each.',
  options: [
    {
      name: 'scenario',
      value: '<names>',
      default: 'steady',
      does: Object.keys(SCENARIOS).join(', '),
    },
    { name: 'mode', value: '<names>', default: 'leased', does: 'leased or exact' },
    { name: 'algorithm', value: '<names>', default: 'sliding-window', does: ALGORITHMS.join(', ') },
    { name: 'isolates', value: '<counts>', default: '3000', does: 'isolates alive at once' },
    {
      name: 'locations',
      value: '<n>',
      default: 'the isolates, at most 300',
      does: 'locations',
    },
    {
      name: 'demand',
      value: '<x>',
      default: "1; shift's 1.1",
      does: "demand as a multiple of the limit's rate",
    },
    { name: 'seconds', value: '<n>', default: '180', does: 'virtual seconds' },
    { name: 'seed', value: '<n>', default: '1', does: 'seeds traffic and churn' },
    { name: 'service-ms', value: '<ms>', default: '1', does: 'time one call occupies an object' },
    {
      name: 'queue-bound',
      value: '<n>',
      default: '100',
      does: 'calls that may wait at an object before "overloaded"',
    },
    {
      name: 'isolate-life',
      value: '<s>',
      default: '300',
      does: 'mean isolate lifetime, 0 for no churn',
    },
    {
      name: 'restart-ms',
      value: '<ms>',
      default: '200',
      does: 'how long a restarting object is unavailable',
    },
    {
      name: 'warmup',
      value: '<s>',
      default: '10',
      does: 'seconds left out of rates, shares and percentiles',
    },
    {
      name: 'fail-mode',
      value: '<mode>',
      default: 'open',
      does: 'open or closed: what a request gets when no decision can be had',
    },
    {
      name: 'burst',
      value: '<s>',
      default: 'the limit, as for a rule without "burst": 60 s for steady, 1 s for small-key',
      does: 'token bucket and GCRA: the burst, in seconds of the rate',
    },
    {
      name: 'skew',
      value: '<ms-list>',
      default: String(DEFAULT_WORLD.clocks.skewMs),
      does: "each machine's clock off by up to ±ms; +ms or -ms: each exactly that far ahead or behind",
    },
    {
      name: 'skew-on',
      value: '<kinds>',
      default: 'all',
      does: `whose clocks are off: ${MACHINE_KINDS.join(', ')}`,
    },
    {
      name: 'drift',
      value: '<ppm>',
      default: String(DEFAULT_WORLD.clocks.driftPpm),
      does: 'each clock drifts by up to ±ppm',
    },
    {
      name: 'edit',
      value: '<kinds>',
      default: DEFAULT_WORLD.edit,
      does: `an edit of the rule while the run lasts: ${Object.entries(EDITS)
        .map(([name, what]) => `${name} (${what})`)
        .join('; ')}`,
    },
    { name: 'edit-at', value: '<s>', default: 'half the run', does: 'when the edit is made' },
    {
      name: 'propagation',
      value: '<s>',
      default: String(DEFAULT_WORLD.propagationS),
      does: 'how long the versions before and after the edit are both in use',
    },
    {
      name: 'lost-answers',
      value: '<xs>',
      default: String(DEFAULT_WORLD.lostAnswers),
      does: 'share of calls whose answer is lost after they ran',
    },
    {
      name: 'tiers',
      value: '<counts>',
      default: String(DEFAULT_WORLD.tiers),
      does: "tiers mixed on the key, limits 1/n, 2/n, … of the rule's",
    },
    {
      name: 'deploy-at',
      value: '<s>',
      default: 'none',
      does: 'a deploy then: every isolate and object instance replaced',
    },
    {
      name: 'ideal-world',
      default: 'off',
      does: 'no skew, no edit, no lost answers (what earlier runs assumed)',
    },
    {
      name: 'out',
      value: '<dir>',
      default: 'none',
      does: 'write a CSV and an SVG chart per run there',
    },
    { name: 'json', default: 'off', does: 'print one JSON object per run instead of the table' },
    {
      name: 'check',
      default: 'off',
      does: "CI's short form: short runs of each unkind condition that fail on any over-admission",
    },
  ],
  notes: [
    'The world is as unkind as the real one unless --ideal-world: each clock off, one answer in',
    'a thousand lost, an edit of the limit at half the run (both versions in use for 60 s).',
    'Exit status: 0, or 1 when a run admitted more than the exact limit allows, 2 for a bad option.',
  ],
}

export { UsageError }

/** What the command line asked for. */
export interface Command {
  runs: RunOptions[]
  json: boolean
  out?: string
  help: boolean
}

/**
 * Reads the options.
 *
 * @param argv - the arguments after the script name
 * @throws {UsageError} naming the option, for an unknown option or a bad value
 */
export function readCommand(argv: string[]): Command {
  const { values, help } = readCommandLine(SCALE, argv)
  if (help) return { runs: [], json: false, help }
  return command(values)
}

function command(values: Record<string, string | true | undefined>): Command {
  const text = (flag: string) => values[flag] as string | undefined
  const json = values.json === true
  const out = text('out')
  if (values.check === true)
    return { runs: checkRuns(), json, help: false, ...(out ? { out } : {}) }
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
  return { runs, json, help: false, ...(out ? { out } : {}) }
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
