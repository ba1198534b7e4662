/**
 * @module tools/rehearse/command
 * `rules rehearse`: the command line of a rehearsal (registered in tools/rules-cli.ts beside the
 * other commands). Reads the two documents and the traffic files (streamed, plain or gzipped),
 * prints the summary (or `--json`, the report), writes the report's files to `--out`, and exits
 * 1 when a `--fail-if` condition is crossed. Nothing is written when the traffic has a bad line
 * (without `--skip-bad`): a partial report is never left looking complete.
 */
import { createReadStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { parseArgs } from 'node:util'
import type { OptionSpec } from '../cli/command-line'
import { RuleConfigError } from '../../src/errors'
import type { MethodOverrideMode } from '../../src/http/shared/settings'
import { parseDuration, parseRulesText } from '../../src/rules'
import { TraceError } from '../simulate/trace'
import type { TrafficFile } from './formats'
import { proposedInThread } from './parallel'
import { rehearse, type Document } from './rehearse'
import { minutesCsv, rulesCsv, summaryText } from './report'
import type { Report } from './report-types'
import { judge, parseCondition, type Condition } from './verdict'

/** The command as `rules --help` shows it. */
export const REHEARSE_HELP: { args: string; does: string; options: OptionSpec[] } = {
  args: '--current <rules.json> --proposed <rules.json> --traffic <file> [<file> ...]',
  does:
    "Replays recorded traffic (Logpush http_requests NDJSON, the Worker's logs, or a CSV with a " +
    'header; plain or gzipped) through the rules in force and the proposed ones, as the Worker ' +
    'decides, and reports per rule and per minute who is newly denied or newly allowed.',
  options: [
    { name: 'current', value: '<file>', default: 'none', does: 'the rules document in force' },
    { name: 'proposed', value: '<file>', default: 'none', does: 'the rules document to rehearse' },
    {
      name: 'traffic',
      value: '<file>',
      default: 'none',
      does: 'a traffic file (repeat it, or list more files after the options)',
    },
    { name: 'json', default: 'off', does: 'print the report as JSON instead of the summary' },
    {
      name: 'out',
      value: '<dir>',
      default: 'none',
      does: 'write report.json, rules.csv, minutes.csv and minutes.svg there',
    },
    {
      name: 'fail-if',
      value: '<cond>',
      default: 'none',
      does: 'exit 1 when crossed: newly-denied>0.1%, newly-denied-keys>10, … (repeatable)',
    },
    {
      name: 'skip-bad',
      default: 'off',
      does: 'count and name bad lines instead of stopping at the first',
    },
    {
      name: 'reorder',
      value: '<time>',
      default: '1m',
      does: "how far out of order a file's lines may be",
    },
    {
      name: 'method-override',
      value: '<mode>',
      default: 'count',
      does: "count or strip: the Worker's METHOD_OVERRIDE",
    },
    {
      name: 'threads',
      value: '<n>',
      default: '2 with 2 cores',
      does: '2: the proposed rules decided in a second thread; 1: in this one',
    },
  ],
}

/** A problem with the command line: exit 2. */
class UsageError extends Error {}

interface Options {
  current: string
  proposed: string
  traffic: string[]
  json: boolean
  out?: string
  conditions: Condition[]
  skipBad: boolean
  reorderMs: number
  methodOverride: MethodOverrideMode
  threads: 1 | 2
}

function readOptions(argv: string[]): Options {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      current: { type: 'string' },
      proposed: { type: 'string' },
      traffic: { type: 'string', multiple: true, default: [] },
      json: { type: 'boolean', default: false },
      out: { type: 'string' },
      'fail-if': { type: 'string', multiple: true, default: [] },
      'skip-bad': { type: 'boolean', default: false },
      reorder: { type: 'string', default: '1m' },
      'method-override': { type: 'string', default: 'count' },
      threads: { type: 'string', default: availableParallelism() > 1 ? '2' : '1' },
    },
  })
  if (values.current === undefined) throw new UsageError('rehearse needs --current <rules.json>')
  if (values.proposed === undefined) throw new UsageError('rehearse needs --proposed <rules.json>')
  const traffic = [...values.traffic, ...positionals]
  if (traffic.length === 0) throw new UsageError('rehearse needs --traffic <file>')
  const conditions = values['fail-if'].map((text) => {
    const condition = parseCondition(text)
    if (typeof condition === 'string') throw new UsageError(condition)
    return condition
  })
  const reorderMs = values.reorder === '0' ? 0 : parseDuration(values.reorder)
  if (reorderMs === undefined)
    throw new UsageError(`--reorder ${JSON.stringify(values.reorder)} is not a duration (30s, 5m)`)
  const methodOverride = values['method-override']
  if (methodOverride !== 'count' && methodOverride !== 'strip')
    throw new UsageError(
      `--method-override is count or strip, not ${JSON.stringify(methodOverride)}`
    )
  if (values.threads !== '1' && values.threads !== '2')
    throw new UsageError(`--threads is 1 or 2, not ${JSON.stringify(values.threads)}`)
  return {
    threads: values.threads === '1' ? 1 : 2,
    current: values.current,
    proposed: values.proposed,
    traffic,
    json: values.json,
    ...(values.out === undefined ? {} : { out: values.out }),
    conditions,
    skipBad: values['skip-bad'],
    reorderMs,
    methodOverride,
  }
}

/** A rules document, compiled; its errors printed as `validate` prints them. */
function loadDocument(file: string): Document | undefined {
  try {
    return { name: file, ruleSet: parseRulesText(readFileSync(file, 'utf8'), file) }
  } catch (error) {
    const problems = error instanceof RuleConfigError ? error.problems : [(error as Error).message]
    for (const problem of problems) console.error(`${file}: ${problem}`)
    return undefined
  }
}

/**
 * Writes the report's files; the chart only where ECharts is installed (a development dependency
 * here: a packaged CLI may be without it, and says so).
 */
async function writeFiles(out: string, report: Report): Promise<string[]> {
  mkdirSync(out, { recursive: true })
  const files: [string, string][] = [
    ['report.json', `${JSON.stringify(report, null, 2)}\n`],
    ['rules.csv', rulesCsv(report.rules)],
    ['minutes.csv', minutesCsv(report.minutes)],
  ]
  const chart = await import('./chart').catch((error: unknown) => {
    console.error(`minutes.svg not written: ${(error as Error).message} (npm install echarts)`)
    return undefined
  })
  if (chart) files.push(['minutes.svg', chart.minutesChartSvg(report)])
  for (const [name, text] of files) writeFileSync(join(out, name), text)
  return files.map(([name]) => name)
}

/** A traffic file on disk, streamed each time it is opened. */
function diskFile(path: string): TrafficFile {
  return {
    name: path,
    open: () => Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>,
  }
}

/**
 * Runs `rules rehearse`.
 *
 * @param argv - the arguments after `rehearse`
 * @param usage - prints a usage problem with the help, returning the exit status (2)
 * @returns the exit status: 0, 1 (a condition crossed, a bad document or bad traffic), 2 (usage)
 */
export async function rehearseCommand(
  argv: string[],
  usage: (problem: string) => number
): Promise<number> {
  let options: Options
  try {
    options = readOptions(argv)
  } catch (error) {
    // parseArgs' own errors (an unknown option) are usage problems too.
    return usage((error as Error).message)
  }
  const current = loadDocument(options.current)
  const proposed = loadDocument(options.proposed)
  if (!current || !proposed) return 1
  let report
  try {
    const { reorderMs, skipBad, methodOverride } = options
    const task = { reorderMs, skipBad, methodOverride, files: options.traffic }
    const document = { document: proposed.ruleSet.document, name: proposed.name }
    report = await rehearse({
      current,
      proposed,
      traffic: options.traffic.map(diskFile),
      reorderMs,
      skipBad,
      methodOverride,
      ...(options.threads === 2
        ? { proposedElsewhere: proposedInThread({ ...task, ...document }, proposed.ruleSet.rules) }
        : {}),
    })
  } catch (error) {
    if (!(error instanceof TraceError)) throw error
    const hint = error.line === undefined ? '' : ' (--skip-bad counts and names such lines instead)'
    console.error(`${error.message}${hint}`)
    console.error('no report written: the traffic could not be read whole')
    return 1
  }
  if (options.conditions.length > 0) report.verdict = judge(options.conditions, report.requests)
  const written = options.out ? await writeFiles(options.out, report) : []
  console.log(options.json ? JSON.stringify(report, null, 2) : summaryText(report))
  if (options.out && !options.json) console.log(`\nwrote ${written.join(', ')} to ${options.out}/`)
  return report.verdict?.some((judged) => judged.crossed) ? 1 : 0
}
