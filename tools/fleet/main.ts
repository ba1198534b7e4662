/**
 * @module tools/fleet/main
 * What `npm run fleet` runs, bundled (`cli.ts`): builds the bundle `wrangler deploy --dry-run`
 * makes, puts the fleet's entry in front of it, runs each scenario asked for, prints a table (or
 * one JSON line per run), and fails when a run over-admitted or answered an unexpected 5xx.
 */
import { join } from 'node:path'
import { buildBundle } from '../../bench/targets'
import { compareWithSimulator } from './compare'
import { writeFleetEntry } from './entry'
import { helpText, USAGE_EXIT, usageMessage, UsageError } from '../cli/command-line'
import { FLEET, readCommand } from './options'
import { tableHeader, tableRow, windowsLine } from './report'
import { runFleet } from './run'

/**
 * Runs the command line.
 *
 * @param argv - the arguments after the script name
 * @param root - the project's root
 * @returns the exit status
 */
export async function main(argv: string[], root: string): Promise<number> {
  let command
  try {
    command = readCommand(argv)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    console.error(usageMessage('npm run fleet --', error))
    return USAGE_EXIT
  }
  if (command.help) {
    console.log(helpText(FLEET))
    return 0
  }
  const startedMs = Date.now()
  const cache = join(root, 'node_modules/.cache/fleet')
  const bundle = await buildBundle(root, 'node_modules/.cache/fleet/bundle')
  const entry = await writeFleetEntry(bundle)
  if (!command.json) console.log(tableHeader())
  let failed = false
  for (const options of command.runs) {
    const summary = await runFleet(options, entry, join(cache, `state-${process.pid}`))
    const label = `${options.scenario}${options.scenario === 'root-down' ? ` ${options.failMode}` : ''}`
    failed ||= summary.overAdmitted > 0 || summary.errors5xx > 0
    const simulator = command.compare ? await compareWithSimulator(options, summary) : undefined
    if (command.json) console.log(JSON.stringify(simulator ? { ...summary, simulator } : summary))
    else {
      console.log(tableRow(label, summary))
      if (simulator) console.log(tableRow('  simulator', summary, simulator))
      console.log(`  windows (admitted / allowed): ${windowsLine(summary)}`)
      if (simulator) console.log(`  simulator's windows:          ${windowsLine(simulator)}`)
    }
  }
  if (!command.json) console.log(`fleet: ${((Date.now() - startedMs) / 1000).toFixed(1)} s`)
  if (failed)
    console.error('fleet: a run over-admitted or answered a 5xx other than a fail-closed 503')
  return failed ? 1 : 0
}
