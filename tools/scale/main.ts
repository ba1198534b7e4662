/**
 * @module tools/scale/main
 * What `npm run simulate:scale` runs, bundled (`cli.ts`): reads the
 * flags, runs each simulation in turn, prints a table (or one JSON object per run), writes CSVs
 * and charts when asked, and fails when a run admitted more than the exact limit allows.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { scaleChartSvg } from './chart'
import { helpText, usageMessage } from '../cli/command-line'
import { readCommand, SCALE, UsageError } from './options'
import { csvOf, fileStem, tableHeader, tableRow } from './report'
import { runScale } from './run'

/**
 * Runs the command line.
 *
 * @param argv - the arguments after the script name
 * @returns the exit status
 */
export async function main(argv: string[]): Promise<number> {
  let command
  try {
    command = readCommand(argv)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    console.error(usageMessage('npm run simulate:scale --', error))
    return 2
  }
  if (command.help) {
    console.log(helpText(SCALE))
    return 0
  }
  if (command.out) mkdirSync(command.out, { recursive: true })
  if (!command.json) console.log(tableHeader())
  let failed = false
  for (const options of command.runs) {
    const { summary, rows } = await runScale(options)
    failed ||= summary.overAdmitted > 0
    console.log(command.json ? JSON.stringify(summary) : tableRow(summary))
    if (command.out) {
      const stem = join(command.out, fileStem(summary))
      writeFileSync(`${stem}.csv`, csvOf(rows))
      writeFileSync(`${stem}.svg`, scaleChartSvg(summary, rows))
    }
  }
  if (failed)
    console.error('simulate:scale: over-admission: a run admitted what the exact limit refuses')
  return failed ? 1 : 0
}
