/**
 * @module tools/simulate/options
 * The simulator's command line: its flags, their checks, and reading the files they name.
 */
import { readFileSync } from 'node:fs'
import { readCommandLine, UsageError, type CommandSpec } from '../cli/command-line'

/** Where the simulator writes unless told: a folder git ignores, never the committed charts. */
export const DEFAULT_OUT = 'simulation-out'

/** The simulator's command line, as `--help` prints it. */
export const SIMULATE: CommandSpec = {
  usage: [
    'npm run simulate -- [--seed <n>] [--duration <s>] [--rules <rules.json>] [--out <dir>] [--decisions <file.jsonl>]',
    'npm run simulate -- --trace <trace.csv|trace.jsonl> [--rules <rules.json>] [--out <dir>] [--decisions <file.jsonl>]',
  ],
  about:
    "Runs the limiter's algorithms on traffic in virtual time: per rule a CSV of each second and " +
    'a chart, comparison.svg, and accuracy.md (each rule against an exact limit), then which ' +
    'algorithm fits which need. `help` as the only argument prints this help too.',
  options: [
    { name: 'seed', value: '<n>', default: '4', does: 'seeds the generated traffic' },
    {
      name: 'duration',
      value: '<s>',
      default: '120',
      does: 'length of the generated traffic in seconds',
    },
    {
      name: 'trace',
      value: '<file>',
      default: 'none: generated traffic',
      does:
        'replay a trace instead: CSV "t,key,cost,status" or JSONL with those fields, t in ms; ' +
        'cost and status optional (rules with countOn need status)',
    },
    {
      name: 'rules',
      value: '<file>',
      default: 'one global rule per algorithm, 500 per 1s',
      does:
        'a rules document; each rule runs on every request, the trace key standing for each of ' +
        'its key parts (the run says which rules it applied)',
    },
    {
      name: 'out',
      value: '<dir>',
      default: DEFAULT_OUT,
      does:
        'where to write the CSVs and charts (docs/simulation holds the committed ones, ' +
        'rewritten only when named here)',
    },
    {
      name: 'decisions',
      value: '<file>',
      default: 'none',
      does: 'also write every decision, one JSON line per request per rule',
    },
  ],
  notes: ['Exit status: 0 done, 2 a bad option or input file.'],
}

/** A problem with an input file: exit 2. */
export class InputError extends Error {}

/** What the command line asked for. */
export interface Options {
  out: string
  seed: number
  durationS: number
  trace?: string
  rules?: string
  decisions?: string
  /** `-h`, `--help` or `help`: print the help and do nothing else. */
  help: boolean
}

/**
 * Reads the options.
 *
 * @param argv - the arguments after the script name
 * @throws {UsageError} for an unknown option, a missing value or a bad number
 */
export function readOptions(argv: string[]): Options {
  const help = argv.length === 1 && argv[0] === 'help'
  const line = help ? readCommandLine(SIMULATE, []) : readCommandLine(SIMULATE, argv)
  if (help || line.help) return { out: DEFAULT_OUT, seed: 4, durationS: 120, help: true }
  const text = (name: string) => line.values[name] as string | undefined
  const seed = wholeNumber('--seed', text('seed') ?? '4', 2 ** 32 - 1)
  const trace = text('trace')
  if (trace !== undefined && text('duration') !== undefined)
    throw new UsageError('--duration applies to generated traffic, not to a --trace')
  const durationS = wholeNumber('--duration', text('duration') ?? '120', 86_400, 1)
  const options: Options = { out: text('out') ?? DEFAULT_OUT, seed, durationS, help: false }
  if (trace !== undefined) options.trace = trace
  if (text('rules') !== undefined) options.rules = text('rules')
  if (text('decisions') !== undefined) options.decisions = text('decisions')
  return options
}

function wholeNumber(flag: string, value: string, max: number, min = 0): number {
  const n = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN
  if (!(n >= min && n <= max))
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, not "${value}"`)
  return n
}

/**
 * Reads a text file the user named.
 *
 * @param file - its path
 * @throws {InputError} naming the file when it cannot be read
 */
export function read(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    throw new InputError(`${file}: cannot read: ${(error as Error).message}`)
  }
}
