/**
 * @module tools/simulate/options
 * The simulator's command line: its flags, their checks, and reading the files they name.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

/** Where the simulator writes unless told: a folder git ignores, never the committed charts. */
export const DEFAULT_OUT = 'simulation-out'

/** The help text. */
export const USAGE = `usage: npm run simulate -- [--seed <n>] [--duration <s>] [--rules <rules.json>]
                            [--out <dir>] [--decisions <file.jsonl>]
       npm run simulate -- --trace <trace.csv|trace.jsonl> [--rules <rules.json>]
                            [--out <dir>] [--decisions <file.jsonl>]

Runs the limiter's algorithms on traffic in virtual time: per rule a CSV of each second and a
chart, comparison.svg, and accuracy.md (each rule against an exact limit), then which algorithm
fits which need.

  --seed <n>          seeds the generated traffic (default 4)
  --duration <s>      length of the generated traffic in seconds (default 120)
  --trace <file>      replay a trace instead: CSV "t,key,cost,status" or JSONL with those fields,
                      t in ms; cost and status optional (rules with countOn need status)
  --rules <file>      a rules document; each rule runs on every request, the trace key standing
                      for each of its key parts (default: one global rule per algorithm, 500 per
                      1s; the run says which rules it applied)
  --out <dir>         where to write the CSVs and charts (default ${DEFAULT_OUT}; docs/simulation
                      holds the committed ones, rewritten only when named here)
  --decisions <file>  also write every decision, one JSON line per request per rule
  -h, --help, help    this help`

/** A problem with the command line or its input files: exit 2. */
export class InputError extends Error {
  constructor(
    message: string,
    readonly showUsage = false
  ) {
    super(message)
  }
}

/** What the command line asked for. */
export interface Options {
  out: string
  seed: number
  durationS: number
  trace?: string
  rules?: string
  decisions?: string
}

/**
 * Reads the flags.
 *
 * @param argv - the arguments after the script name
 * @throws {InputError} for an unknown flag, a missing value or a bad number
 */
export function readOptions(argv: string[]): Options {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      options: {
        seed: { type: 'string', default: '4' },
        duration: { type: 'string' },
        trace: { type: 'string' },
        rules: { type: 'string' },
        out: { type: 'string', default: DEFAULT_OUT },
        decisions: { type: 'string' },
      },
    }).values
  } catch (error) {
    throw new InputError((error as Error).message, true)
  }
  const seed = wholeNumber('--seed', parsed.seed, 2 ** 32 - 1)
  if (parsed.trace !== undefined && parsed.duration !== undefined)
    throw new InputError('--duration applies to generated traffic, not to a --trace', true)
  const durationS = wholeNumber('--duration', parsed.duration ?? '120', 86_400, 1)
  const options: Options = { out: parsed.out, seed, durationS }
  if (parsed.trace !== undefined) options.trace = parsed.trace
  if (parsed.rules !== undefined) options.rules = parsed.rules
  if (parsed.decisions !== undefined) options.decisions = parsed.decisions
  return options
}

function wholeNumber(flag: string, value: string, max: number, min = 0): number {
  const n = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN
  if (!(n >= min && n <= max))
    throw new InputError(
      `${flag} must be a whole number from ${min} to ${max}, not "${value}"`,
      true
    )
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
