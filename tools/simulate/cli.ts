/**
 * @module tools/simulate/cli
 * `npm run simulate -- [options]`: drives the limiter's algorithms with traffic in virtual time,
 * writes what each lets through second by second, charts it in sliding windows sampled finely
 * enough to show bursts, measures it against an exact limit, and ends with which algorithm fits
 * which need.
 *
 * By default: the bursty default profile for 120 s against one global rule per algorithm (500 per
 * 1s). With `--trace`: a recorded trace against `--rules` (or the same per-algorithm rules). It
 * says which rules it applied. Writes `<rule>.csv`, `<rule>.svg`, `comparison.svg` and
 * `accuracy.md` to `--out` (default `simulation-out/`, which git ignores).
 */
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs'
import { basename, join } from 'node:path'
import { RuleConfigError } from '../../src/errors'
import { parseRulesText, type Rule, type RuleSet } from '../../src/rules'
import { accuracyOf, chargesOf, type RuleRun } from './accuracy'
import { comparisonChartSvg, ruleChartSvg, type ChartRun } from './chart'
import { niceCeil } from './chart-parts'
import { helpText, usageMessage, UsageError } from '../cli/command-line'
import { InputError, read, readOptions, SIMULATE, type Options } from './options'
import { generateProfile, DEFAULT_PROFILE, type Arrival } from './profile'
import {
  compileEach,
  defaultRules,
  isShaper,
  KeyMappingError,
  MissingStatusError,
  runRules,
  type RuleOutcomes,
} from './run'
import {
  accuracyMarkdown,
  accuracyText,
  sameDecisionNotes,
  sameDecisionsAs,
  whichFitsText,
} from './report'
import { perSecond, secondsSpanned, toCsv, type SecondRow } from './stats'
import { TraceError, parseTrace } from './trace'
import { busiestKeySeries, type Peak } from './windows'

function loadRules(options: Options): { ruleSet: RuleSet; skipped: string[] } {
  if (options.rules === undefined) return compileEach(defaultRules())
  return { ruleSet: parseRulesText(read(options.rules), options.rules), skipped: [] }
}

/**
 * A rule's run as the charts draw it: its per-second rows, and its windows sampled at a step fine
 * enough to see within a period (about 2,000 samples at most).
 */
function chartRunOf(
  arrivals: readonly Arrival[],
  run: RuleOutcomes,
  rows: SecondRow[],
  fullest: Peak,
  sameAs: string | undefined
): ChartRun {
  const { limit, periodMs } = run.rule.policy
  const stepMs = niceCeil(Math.max((rows.length * 1000) / 2000, periodMs / 100))
  const samples = Math.floor((rows.length * 1000) / stepMs) + 1
  const shaper = isShaper(run.rule)
  const everything = { allowed: run.allowed.map(() => true), byExecution: false }
  const series = (outcomes: Pick<RuleRun, 'allowed' | 'byExecution'>) =>
    busiestKeySeries(chargesOf(arrivals, { ...run, ...outcomes }), periodMs, stepMs, samples)
  const admitted = series({ allowed: run.allowed, byExecution: false })
  return {
    id: run.rule.id,
    algorithm: label(run),
    limit,
    periodMs,
    shaper,
    keyed: new Set(run.keys).size > 1,
    rows,
    stepMs,
    requested: series(everything),
    admitted,
    executed: shaper ? series({ allowed: run.allowed, byExecution: true }) : admitted,
    fullest,
    ...(sameAs === undefined ? {} : { sameAs }),
  }
}

/** Where the rules came from, as the summary says it. */
function rulesSource(options: Options): string {
  return options.rules === undefined
    ? 'the default rules, one global rule per algorithm at 500 per 1s (--rules <file> applies yours)'
    : options.rules
}

/** A rule's limit and key, as the summary lists it. */
function describeRule(rule: Rule): string {
  const key = rule.key.length === 0 ? 'one global key' : 'one key per trace key'
  return `${rule.summary}, ${key}`
}

function label(outcomes: RuleOutcomes): string {
  return `${outcomes.rule.policy.algorithm}${isShaper(outcomes.rule) ? ' (shape)' : ''}`
}

function main(argv: string[]): number {
  const started = performance.now()
  const options = readOptions(argv)
  if (options.help) {
    console.log(helpText(SIMULATE))
    return 0
  }
  const arrivals: Arrival[] = options.trace
    ? parseTrace(read(options.trace), options.trace)
    : generateProfile({
        ...DEFAULT_PROFILE,
        seed: options.seed,
        durationMs: options.durationS * 1000,
      })
  const { ruleSet, skipped } = loadRules(options)
  for (const note of skipped) console.error(`note: ${note}`)
  if (ruleSet.rules.length === 0) throw new InputError('no rules to run')
  if (ruleSet.rules.some((rule) => rule.id === 'comparison'))
    throw new InputError('a rule id "comparison" would overwrite comparison.svg')

  const runs = runRules(arrivals, ruleSet.rules)
  const times = arrivals.map((a) => a.t)
  const seconds = options.trace ? secondsSpanned(times, runs) : options.durationS
  const traffic = options.trace
    ? `trace ${basename(options.trace)}, ${arrivals.length} requests`
    : `default profile, --seed ${options.seed}, ${options.durationS} s, ${arrivals.length} requests`

  writable(options.out, () => mkdirSync(options.out, { recursive: true }))
  const written: string[] = []
  const write = (name: string, text: string) => {
    const path = join(options.out, name)
    writable(path, () => writeFileSync(path, text))
    written.push(name)
  }
  const accuracy = runs.map((run) =>
    accuracyOf(arrivals, {
      id: run.rule.id,
      algorithm: label(run),
      limit: run.rule.policy.limit,
      periodMs: run.rule.policy.periodMs,
      byExecution: isShaper(run.rule),
      keys: run.keys,
      allowed: run.allowed,
      delayMs: run.delayMs,
    })
  )
  const decided = runs.map((run) => ({ id: run.rule.id, allowed: run.allowed }))
  const twins = sameDecisionNotes(decided)
  const sameAs = sameDecisionsAs(decided)
  const charted = runs.map((run, i) => {
    const rows = perSecond(times, run, seconds)
    write(`${run.rule.id}.csv`, toCsv(rows))
    return chartRunOf(arrivals, run, rows, accuracy[i]!.fullest, sameAs[i])
  })
  charted.forEach((chartRun, i) => {
    const subtitle = `${label(runs[i]!)}: ${runs[i]!.rule.summary} · ${traffic}`
    write(`${chartRun.id}.svg`, ruleChartSvg(chartRun, subtitle, charted))
  })
  write('comparison.svg', comparisonChartSvg(charted, traffic))
  const applied = `Rules applied: ${rulesSource(options)}.`
  write(
    'accuracy.md',
    accuracyMarkdown(accuracy, [`Traffic: ${traffic}.`, applied, ...twins, ...skipped])
  )
  const decisions = options.decisions
  if (decisions) writable(decisions, () => writeDecisions(decisions, arrivals, runs))

  console.log(`Traffic: ${traffic}.`)
  console.log(`Rules applied: ${rulesSource(options)}:`)
  for (const run of runs) console.log(`  ${run.rule.id}: ${label(run)}, ${describeRule(run.rule)}`)
  console.log(`\n${accuracyText(accuracy)}`)
  if (twins.length > 0) console.log(`\n${twins.join('\n')}`)
  const ms = Math.round(performance.now() - started)
  console.log(`\nwrote ${written.length} files to ${options.out}/ in ${ms} ms`)
  if (options.decisions) console.log(`wrote every decision to ${options.decisions}`)
  console.log(`\nWhich algorithm fits (this run's numbers; docs/algorithms.md says more):\n`)
  console.log(whichFitsText(accuracy))
  return 0
}

/** Runs `action`, reporting a failure to write `path` as the user's problem (exit 2). */
function writable(path: string, action: () => void): void {
  try {
    action()
  } catch (error) {
    throw new InputError(`${path}: cannot write: ${(error as Error).message}`)
  }
}

/** One JSON line per request per rule, in time order; written in chunks, as it can be large. */
function writeDecisions(file: string, arrivals: Arrival[], runs: RuleOutcomes[]): void {
  const fd = openSync(file, 'w')
  try {
    let chunk: string[] = []
    arrivals.forEach(({ t, key }, i) => {
      for (const run of runs) {
        const line: Record<string, unknown> = {
          t,
          key,
          rule: run.rule.id,
          allowed: run.allowed[i],
          remaining: run.remaining[i],
        }
        if (isShaper(run.rule) && run.allowed[i]) line.delayMs = run.delayMs[i]
        chunk.push(JSON.stringify(line))
      }
      if (chunk.length >= 10_000) {
        writeSync(fd, `${chunk.join('\n')}\n`)
        chunk = []
      }
    })
    if (chunk.length > 0) writeSync(fd, `${chunk.join('\n')}\n`)
  } finally {
    closeSync(fd)
  }
}

try {
  process.exitCode = main(process.argv.slice(2))
} catch (error) {
  const known = [InputError, TraceError, RuleConfigError, KeyMappingError, MissingStatusError]
  if (error instanceof UsageError) console.error(usageMessage('npm run simulate --', error))
  else if (known.some((kind) => error instanceof kind)) console.error((error as Error).message)
  else throw error
  process.exitCode = 2
}
