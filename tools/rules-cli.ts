/**
 * @module tools/rules-cli
 * `npm run rules -- <command>`: check rules documents and put them in force.
 *
 *   validate [file]                     exit 0 if valid; else every error with its path, exit 1
 *   push [file] [--local] [--persist-to <dir>] [--env <name>]
 *                                       validate, then write to the RULES KV namespace
 *   schema                              print the JSON Schema (rules.schema.json)
 *
 * `file` defaults to rules.json.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { RuleConfigError } from '../src/errors'
import { RULES_KV_KEY } from '../src/provider/rules-source'
import { parseRulesText, type RuleSet } from '../src/rules'
import { rulesJsonSchema } from './json-schema'

const USAGE = `usage: npm run rules -- validate [file]
       npm run rules -- push [file] [--local] [--persist-to <dir>] [--env <name>]
       npm run rules -- schema`

function main(argv: string[]): number {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      local: { type: 'boolean', default: false },
      'persist-to': { type: 'string' },
      env: { type: 'string' },
    },
  })
  const [command, file = 'rules.json', ...extra] = positionals
  if (extra.length > 0) return usage(`unexpected arguments: ${extra.join(' ')}`)
  switch (command) {
    case 'validate':
      return validate(file) ? 0 : 1
    case 'push': {
      if (!validate(file)) return 1
      const args = ['kv', 'key', 'put', RULES_KV_KEY, '--binding', 'RULES', '--path', file]
      if (values.local) args.push('--local')
      if (values['persist-to']) args.push('--persist-to', values['persist-to'])
      if (values.env) args.push('--env', values.env)
      const result = spawnSync('wrangler', args, { stdio: 'inherit' })
      if (result.error) console.error(`could not run wrangler: ${result.error.message}`)
      return result.status ?? 1
    }
    case 'schema':
      console.log(JSON.stringify(rulesJsonSchema(), null, 2))
      return 0
    default:
      return usage(command === undefined ? 'no command' : `unknown command ${command}`)
  }
}

/** Prints whether `file` is a valid rules document; true if it is. */
function validate(file: string): boolean {
  let ruleSet: RuleSet
  try {
    ruleSet = parseRulesText(readFileSync(file, 'utf8'), file)
  } catch (error) {
    if (error instanceof RuleConfigError) {
      console.error(error.message)
      return false
    }
    console.error(`${file}: ${(error as Error).message}`)
    return false
  }
  console.log(`${file}: valid (${ruleSet.rules.length} rules, mode ${ruleSet.mode})`)
  return true
}

function usage(problem: string): number {
  console.error(`${problem}\n${USAGE}`)
  return 2
}

try {
  process.exitCode = main(process.argv.slice(2))
} catch (error) {
  process.exitCode = usage((error as Error).message)
}
