// `npm run bench` flags.
import { parseArgs } from 'node:util'
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

export const USAGE = `usage: npm run bench -- [options]
  --duration <s>        measured seconds per run (default 10; --quick: 2)
  --connections <n>     closed-loop connections (default 32)
  --rate <req/s>        hold the load at this rate instead of as fast as each target answers:
                        latency below saturation, without queueing (ratios are then ~1)
  --reps <n>            interleaved repetitions (default 3; --quick: 1)
  --scenarios <a,b>     of: ${SCENARIOS.map((s) => s.name).join(', ')} (default all)
  --targets <a,b>       of: ${LIMITERS.join(', ')} (default all; bare always runs)
  --keys <n>            distinct keys of many-keys and the alarm scenarios (default 10000; --quick: 2000)
  --do-latency <ms>     delay every Durable Object call by a simulated network hop (default 0)
  --quick               check the harness: 2 s runs, 1 rep, fewer keys
  --bundle <path>       a prebuilt limiter bundle (index.js) instead of building src/
  --peer-bundle <path>  a prebuilt peer bundle instead of building bench/peer/`

/** Parses the command line; exits with the usage on a bad flag. */
export function parseOptions(argv = process.argv.slice(2)): Options {
  try {
    const { values } = parseArgs({
      args: argv,
      options: {
        duration: { type: 'string' },
        connections: { type: 'string', default: '32' },
        rate: { type: 'string' },
        reps: { type: 'string' },
        scenarios: { type: 'string' },
        targets: { type: 'string' },
        keys: { type: 'string' },
        'do-latency': { type: 'string', default: '0' },
        quick: { type: 'boolean', default: false },
        bundle: { type: 'string' },
        'peer-bundle': { type: 'string' },
        help: { type: 'boolean', default: false },
      },
    })
    if (values.help) {
      console.log(USAGE)
      process.exit(0)
    }
    const quick = values.quick
    return {
      duration: integer('duration', values.duration ?? (quick ? '2' : '10'), 1),
      connections: integer('connections', values.connections, 1),
      rate: values.rate === undefined ? undefined : integer('rate', values.rate, 1),
      reps: integer('reps', values.reps ?? (quick ? '1' : '3'), 1),
      scenarios: list(
        'scenarios',
        values.scenarios,
        SCENARIOS.map((s) => s.name)
      ),
      targets: list('targets', values.targets, [...LIMITERS]) as LimiterName[],
      keys: integer('keys', values.keys ?? (quick ? '2000' : '10000'), 1),
      latencyMs: integer('do-latency', values['do-latency'], 0),
      quick,
      bundle: values.bundle,
      peerBundle: values['peer-bundle'],
    }
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : error}\n${USAGE}`)
    process.exit(2)
  }
}

function integer(name: string, value: string, min: number): number {
  const number = Number(value)
  if (!Number.isInteger(number) || number < min)
    throw new Error(`--${name} must be an integer of at least ${min}, got ${value}`)
  return number
}

function list(name: string, value: string | undefined, known: string[]): string[] {
  if (value === undefined) return known
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
  const unknown = items.filter((item) => !known.includes(item))
  if (unknown.length > 0) throw new Error(`--${name}: unknown ${unknown.join(', ')}`)
  return items
}
