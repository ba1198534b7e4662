/**
 * @module tools/fleet/options
 * `npm run fleet`'s command line, read by `cli/command-line.ts` as every entry's is.
 */
import type { FailMode } from '../../src/types'
import { readCommandLine, UsageError, type CommandSpec } from '../cli/command-line'

/** The fault scenarios, with what each does. */
export const SCENARIOS = {
  steady: 'steady demand, no fault',
  deploy: 'the runtime restarted mid-window: every isolate and in-memory tier lost, storage kept',
  'slow-root': 'from a third of the run, every hop to the root 300 ms slower for 10 s',
  'root-down': 'mid-window the root unreachable for 5 s (once per fail mode)',
  edit: 'mid-window the limit × 0.9, old and new versions served by different isolates for 20 s',
  reset: 'mid-window an admin reset of the key (its count restarts by design)',
} as const

/** A scenario's name. */
export type ScenarioName = keyof typeof SCENARIOS

/** The algorithms a leased rule may use. */
export const ALGORITHMS = ['sliding-window', 'fixed-window', 'token-bucket', 'gcra'] as const

/** One run of the fleet. */
export interface FleetOptions {
  scenario: ScenarioName
  algorithm: (typeof ALGORITHMS)[number]
  /** Demand as a multiple of the limit's rate. */
  demand: number
  isolates: number
  locations: number
  seconds: number
  seed: number
  /** Units the key allows per period. */
  limit: number
  periodMs: number
  /** Units each request costs. */
  cost: number
  failMode: FailMode
}

/** What the command line asked for. */
export interface Command {
  runs: FleetOptions[]
  compare: boolean
  check: boolean
  json: boolean
  help: boolean
}

/** The fleet's command line, as `--help` prints it. */
export const FLEET: CommandSpec = {
  usage: ['npm run fleet -- [options]'],
  options: [
    {
      name: 'scenario',
      value: '<name>',
      default: 'steady',
      does: Object.keys(SCENARIOS).join(', '),
    },
    { name: 'algorithm', value: '<name>', default: 'sliding-window', does: ALGORITHMS.join(', ') },
    {
      name: 'demand',
      value: '<x>',
      default: '1.2',
      does: "demand as a multiple of the limit's rate, 0.5 to 3",
    },
    { name: 'isolates', value: '<n>', default: '12', does: 'Worker isolates' },
    {
      name: 'locations',
      value: '<n>',
      default: '4',
      does: 'locations, in as many regions as the world gives',
    },
    { name: 'seconds', value: '<n>', default: '40', does: 'seconds of load, 10 to 300' },
    { name: 'seed', value: '<n>', default: '1', does: 'seeds the traffic' },
    {
      name: 'limit',
      value: '<units>',
      default: '20000: 2,000 a second, the regional tier',
      does: 'units per period',
    },
    { name: 'period', value: '<s>', default: '10', does: 'the period' },
    { name: 'cost', value: '<units>', default: '10', does: 'units each request costs' },
    {
      name: 'fail-mode',
      value: '<mode>',
      default: 'open; root-down runs both',
      does: 'open or closed',
    },
    {
      name: 'compare',
      default: 'off',
      does: 'run the scale simulator in the same world and print both',
    },
    {
      name: 'check',
      default: 'off',
      does: "CI's form: a short steady run and the deploy fault; fails on over-admission or a 5xx",
    },
    { name: 'json', default: 'off', does: 'print one JSON line per run' },
  ],
  notes: [
    'Exit status: 0; 1 when a run over-admitted or answered a 5xx other than a fail-closed 503;',
    '2 for a bad option.',
  ],
}

/**
 * Reads the options.
 *
 * @param argv - the arguments after the script name
 * @throws {UsageError} naming the option, for an unknown option or a bad value
 */
export function readCommand(argv: readonly string[]): Command {
  const { values, help } = readCommandLine(FLEET, argv)
  if (help) return { runs: [], compare: false, check: false, json: false, help }
  const text = (flag: string, fallback: string) => {
    const value = values[flag]
    return typeof value === 'string' ? value : fallback
  }
  const check = values.check === true
  const base: FleetOptions = {
    scenario: oneOf(
      '--scenario',
      text('scenario', 'steady'),
      Object.keys(SCENARIOS)
    ) as ScenarioName,
    algorithm: oneOf(
      '--algorithm',
      text('algorithm', 'sliding-window'),
      ALGORITHMS
    ) as FleetOptions['algorithm'],
    demand: decimal('--demand', text('demand', '1.2'), 0.5, 3),
    isolates: whole('--isolates', text('isolates', '12'), 1, 64),
    locations: whole('--locations', text('locations', '4'), 1, 64),
    seconds: whole('--seconds', text('seconds', '40'), 10, 300),
    seed: whole('--seed', text('seed', '1'), 0, 2 ** 32 - 1),
    limit: whole('--limit', text('limit', '20000'), 1, 100_000_000),
    periodMs: whole('--period', text('period', '10'), 1, 3600) * 1000,
    cost: whole('--cost', text('cost', '10'), 1, 100),
    failMode: oneOf('--fail-mode', text('fail-mode', 'open'), ['open', 'closed']) as FailMode,
  }
  if (base.locations > base.isolates)
    throw new UsageError(
      `--locations (${base.locations}) must not exceed --isolates (${base.isolates})`
    )
  const runs: FleetOptions[] = check
    ? [
        { ...base, scenario: 'steady', seconds: 20 },
        { ...base, scenario: 'deploy', seconds: 25 },
      ]
    : base.scenario === 'root-down' && values['fail-mode'] === undefined
      ? [base, { ...base, failMode: 'closed' }]
      : [base]
  return {
    runs,
    compare: values.compare === true,
    check,
    json: values.json === true,
    help: false,
  }
}

function oneOf(flag: string, value: string, allowed: readonly string[]): string {
  if (!allowed.includes(value))
    throw new UsageError(`${flag} must be one of ${allowed.join(', ')}, not "${value}"`)
  return value
}

function whole(flag: string, value: string, min: number, max: number): number {
  const n = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN
  if (!(n >= min && n <= max))
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, not "${value}"`)
  return n
}

function decimal(flag: string, value: string, min: number, max: number): number {
  const n = /^[0-9]*\.?[0-9]+$/.test(value) ? Number(value) : Number.NaN
  if (!(n >= min && n <= max))
    throw new UsageError(`${flag} must be a number from ${min} to ${max}, not "${value}"`)
  return n
}
