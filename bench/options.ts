// `npm run bench` flags.
import {
  helpText,
  readCommandLine,
  usageMessage,
  UsageError,
  type CommandSpec,
  type OptionSpec,
} from '../tools/cli/command-line.ts'
import { LIMITERS, type LimiterName } from './limiters.ts'
import { SCENARIOS } from './scenarios.ts'

/** What a run does. */
export interface Options {
  duration: number
  connections: number
  /** Requests per second across all connections (open-ended when undefined: closed loop). */
  rate: number | undefined
  reps: number
  scenarios: string[]
  targets: LimiterName[]
  keys: number
  latencyMs: number
  quick: boolean
  bundle?: string
  peerBundle?: string
}

/** `--connections`, which `npm run bench:profile` takes too. */
export const CONNECTIONS: OptionSpec = {
  name: 'connections',
  value: '<n>',
  default: '32',
  does: 'closed-loop connections',
}

/** The benchmark's command line, as `--help` prints it. */
export const BENCH: CommandSpec = {
  usage: ['npm run bench -- [options]'],
  about:
    'The rate limiter beside a naive Durable Object limiter and hono-rate-limiter, each compared ' +
    'with a bare pass-through Worker in the same run, served by Miniflare on 127.0.0.1.',
  options: [
    { name: 'duration', value: '<s>', default: '10; --quick 2', does: 'measured seconds per run' },
    CONNECTIONS,
    {
      name: 'rate',
      value: '<req/s>',
      default: 'none: as fast as each target answers',
      does: 'hold the load at this rate: latency below saturation, without queueing (ratios are then ~1)',
    },
    { name: 'reps', value: '<n>', default: '3; --quick 1', does: 'interleaved repetitions' },
    {
      name: 'scenarios',
      value: '<a,b>',
      default: 'all',
      does: `of: ${SCENARIOS.map((s) => s.name).join(', ')}`,
    },
    {
      name: 'targets',
      value: '<a,b>',
      default: 'all',
      does: `of: ${LIMITERS.join(', ')} (bare always runs)`,
    },
    {
      name: 'keys',
      value: '<n>',
      default: '10000; --quick 2000',
      does: 'distinct keys of many-keys, watched-keys and the alarm scenarios',
    },
    {
      name: 'do-latency',
      value: '<ms>',
      default: '0',
      does: 'delay every Durable Object call by a simulated network hop',
    },
    { name: 'quick', default: 'off', does: 'check the harness: 2 s runs, 1 rep, fewer keys' },
    {
      name: 'bundle',
      value: '<path>',
      default: 'none: build src/',
      does: 'a prebuilt limiter bundle (index.js)',
    },
    {
      name: 'peer-bundle',
      value: '<path>',
      default: 'none: build bench/peer/',
      does: 'a prebuilt peer bundle',
    },
  ],
  notes: ['Exit status: 0 done, 1 a run failed, 2 a bad option.'],
}

/** Parses the command line; prints the help and exits 0, or exits 2 on a bad option. */
export function parseOptions(argv = process.argv.slice(2)): Options {
  try {
    const { values, help } = readCommandLine(BENCH, argv)
    if (help) {
      console.log(helpText(BENCH))
      process.exit(0)
    }
    const text = (name: string) => values[name] as string | undefined
    const quick = values.quick === true
    return {
      duration: integer('duration', text('duration') ?? (quick ? '2' : '10'), 1),
      connections: integer('connections', text('connections') ?? '32', 1),
      rate: text('rate') === undefined ? undefined : integer('rate', text('rate')!, 1),
      reps: integer('reps', text('reps') ?? (quick ? '1' : '3'), 1),
      scenarios: list(
        'scenarios',
        text('scenarios'),
        SCENARIOS.map((s) => s.name)
      ),
      targets: list('targets', text('targets'), [...LIMITERS]) as LimiterName[],
      keys: integer('keys', text('keys') ?? (quick ? '2000' : '10000'), 1),
      latencyMs: integer('do-latency', text('do-latency') ?? '0', 0),
      quick,
      bundle: text('bundle'),
      peerBundle: text('peer-bundle'),
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    console.error(usageMessage('npm run bench --', error))
    process.exit(2)
  }
}

function integer(name: string, value: string, min: number): number {
  const number = Number(value)
  if (!Number.isInteger(number) || number < min)
    throw new UsageError(`--${name} must be a whole number of at least ${min}, not "${value}"`)
  return number
}

function list(name: string, value: string | undefined, known: string[]): string[] {
  if (value === undefined) return known
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
  const unknown = items.filter((item) => !known.includes(item))
  if (unknown.length > 0) throw new UsageError(`--${name}: unknown ${unknown.join(', ')}`)
  return items
}
