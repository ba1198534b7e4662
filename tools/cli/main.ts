/**
 * @module tools/cli/main
 * The package's command line, `npx edge-rate-limiter <rules|preflight> …`: the same commands as
 * `npm run rules` and `npm run preflight` inside the repository, with the same help, exit
 * statuses and messages. `npm run build:lib` bundles this file into `lib/cli.js` (the package's
 * `bin`); the limiter's own modules it uses stay imports of `lib/`, so the package holds them
 * once.
 */
import { readFileSync } from 'node:fs'
import { isMainThread } from 'node:worker_threads'
import { helpText, USAGE_EXIT, usageMessage, UsageError } from './command-line'
import { runPreflight } from './preflight'
import { runRules } from './rules'

const PROGRAM = 'npx edge-rate-limiter'

const HELP = helpText({
  usage: [`${PROGRAM} rules <command> [options]`, `${PROGRAM} preflight [options]`],
  options: [],
})

/**
 * Runs the command line.
 *
 * @param argv - the arguments after the program's name
 * @returns the exit status
 */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === 'rules')
    return runRules(rest, {
      program: `${PROGRAM} rules`,
      // The package ships the schema rules.schema.json holds, beside this file.
      schema: () =>
        JSON.parse(readFileSync(new URL('./rules.schema.json', import.meta.url), 'utf8')),
    })
  if (command === 'preflight') return runPreflight(rest, `${PROGRAM} preflight`)
  if (command === '-h' || command === '--help') {
    console.log(HELP)
    return 0
  }
  const problem =
    command === undefined
      ? 'no command'
      : `unknown ${command.startsWith('-') ? 'option' : 'command'} ${command}`
  console.error(usageMessage(PROGRAM, new UsageError(problem)))
  return USAGE_EXIT
}

// The same bundle is the entry of the thread a rehearsal decides its proposed rules in
// (tools/rehearse/parallel.ts), which must not run the command line again.
if (isMainThread) process.exitCode = await main(process.argv.slice(2))
