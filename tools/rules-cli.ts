/**
 * @module tools/rules-cli
 * `npm run rules -- <command>`: check rules documents and put them in force. `--help` (or `-h`,
 * or `help [command]`) prints what each command and option does, from {@link COMMANDS}.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { RuleConfigError } from '../src/errors'
import { compileEnvoy, parseRulesText, type RuleSet } from '../src/rules'
import { parse as parseYaml } from 'yaml'
import { rulesJsonSchema } from './json-schema'
import { REHEARSE_HELP, rehearseCommand } from './rehearse/command'
import { listArgs, listedRevisions, putArgs, type PushTarget } from './rules-push'

/** A command, as the help shows it: its arguments, what it does, and its options. */
interface Command {
  args: string
  does: string[]
  options: [string, string][]
}

const COMMANDS: Record<string, Command> = {
  validate: {
    args: '[file]',
    does: [
      'Checks a rules document (JSON) or an envoyproxy/ratelimit configuration (.yaml, .yml)',
      'and prints every error in it, each with the path of its field; exit 1 if there is any.',
    ],
    options: [],
  },
  import: {
    args: '<envoy.yaml> [<envoy.yaml> ...]',
    does: ['Prints the rules document holding these Envoy configurations (under "domains").'],
    options: [
      ['--schema <path>', 'the "$schema" the document names (default ./rules.schema.json)'],
    ],
  },
  push: {
    args: '[file] [--local] [--persist-to <dir>] [--env <name>]',
    does: [
      'Validates the document, then writes it to the RULES KV namespace as "rules" and',
      '"rules:last-good", with the next revision: in force without a redeploy.',
    ],
    options: [
      ['--local', "write to wrangler dev's local namespace (default: the deployed one)"],
      [
        '--persist-to <dir>',
        "with --local: wrangler dev's state directory (default .wrangler/state)",
      ],
      ['--env <name>', 'the wrangler environment whose RULES namespace to write'],
    ],
  },
  rehearse: REHEARSE_HELP,
  schema: {
    args: '',
    does: ['Prints the JSON Schema of rules documents (what rules.schema.json holds).'],
    options: [],
  },
  help: { args: '[command]', does: ["Prints this help, or one command's."], options: [] },
}

/** The help: every command with its options, or one command's. */
function help(only?: string): string {
  const names = only !== undefined && only in COMMANDS ? [only] : Object.keys(COMMANDS)
  const lines = ['usage: npm run rules -- <command> [options]', '']
  for (const name of names) {
    const command = COMMANDS[name]!
    lines.push(`  ${name} ${command.args}`.trimEnd())
    for (const line of command.does) lines.push(`      ${line}`)
    for (const [flag, does] of command.options) lines.push(`      ${flag.padEnd(20)}${does}`)
    lines.push('')
  }
  lines.push(`  ${'-h, --help'.padEnd(24)}this help (also after a command)`)
  lines.push(
    '',
    '[file] defaults to rules.json. Exit status: 0 done, 1 invalid or failed, 2 usage.'
  )
  return lines.join('\n')
}

function main(argv: string[]): number | Promise<number> {
  // `rehearse` reads its own options (tools/rehearse/command.ts).
  const asksHelp = argv.includes('--help') || argv.includes('-h')
  if (argv[0] === 'rehearse') {
    if (!asksHelp) return rehearseCommand(argv.slice(1), usage)
    console.log(help('rehearse'))
    return 0
  }
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h', default: false },
      local: { type: 'boolean', default: false },
      'persist-to': { type: 'string' },
      env: { type: 'string' },
      schema: { type: 'string' },
    },
  })
  const [command, file = 'rules.json', ...extra] = positionals
  if (values.help || command === 'help') {
    console.log(help(command === 'help' ? positionals[1] : command))
    return 0
  }
  if (command === 'import') return importEnvoy(positionals.slice(1), values.schema)
  if (extra.length > 0) return usage(`unexpected arguments: ${extra.join(' ')}`)
  switch (command) {
    case 'validate':
      return validate(file) ? 0 : 1
    case 'push': {
      if (!validate(file)) return 1
      // An Envoy configuration goes to KV as the rules document that holds it.
      const path = isYaml(file) ? writeImported(file) : file
      return push(path, {
        local: values.local,
        persistTo: values['persist-to'],
        env: values.env,
      })
    }
    case 'schema':
      console.log(JSON.stringify(rulesJsonSchema(), null, 2))
      return 0
    default:
      return usage(command === undefined ? 'no command' : `unknown command ${command}`)
  }
}

/**
 * Writes a validated document to `rules` and `rules:last-good`, stamped with a revision above
 * the newest one in the namespace, so every isolate takes it and none goes back from it.
 */
function push(path: string, target: PushTarget): number {
  const listed = spawnSync('wrangler', listArgs(target), { encoding: 'utf8' })
  const revisions = listed.status === 0 ? listedRevisions(listed.stdout) : []
  if (listed.status !== 0)
    console.error('could not list the rules keys; the revision is the time alone')
  const { revision, commands } = putArgs(path, target, Date.now(), revisions)
  for (const args of commands) {
    const result = spawnSync('wrangler', args, { stdio: 'inherit' })
    if (result.error) console.error(`could not run wrangler: ${result.error.message}`)
    if (result.status !== 0) return result.status ?? 1
  }
  console.log(`pushed revision ${revision} to rules and rules:last-good`)
  return 0
}

/** Prints whether `file` is a valid rules document (or Envoy configuration); true if it is. */
function validate(file: string): boolean {
  if (isYaml(file)) {
    const result = loadEnvoy([file])
    if (result.problems.length > 0) {
      console.error(result.problems.join('\n'))
      return false
    }
    console.log(
      `${file}: valid envoyproxy/ratelimit configuration (domain ${[...result.domains.keys()].join(', ')})`
    )
    return true
  }
  let ruleSet: RuleSet
  try {
    ruleSet = parseRulesText(readFileSync(file, 'utf8'), file)
  } catch (error) {
    if (error instanceof RuleConfigError) {
      // One line per error, each naming the file and the field, as compilers print them.
      for (const problem of error.problems) console.error(`${file}: ${problem}`)
      const count = error.problems.length
      console.error(`${count} ${count === 1 ? 'error' : 'errors'} in ${file}`)
      return false
    }
    console.error(`${file}: ${(error as Error).message}`)
    return false
  }
  console.log(`${file}: valid (${ruleSet.rules.length} rules, mode ${ruleSet.mode})`)
  return true
}

/** Prints the rules document holding the given Envoy configurations; 1 if any is invalid. */
function importEnvoy(files: string[], schema = './rules.schema.json'): number {
  if (files.length === 0) return usage('import needs at least one Envoy YAML file')
  const { configs, problems } = loadEnvoy(files)
  if (problems.length > 0) {
    console.error(problems.join('\n'))
    return 1
  }
  const document = { $schema: schema, version: 1, rules: [], domains: configs }
  console.log(JSON.stringify(document, null, 2))
  return 0
}

/** Reads and validates Envoy YAML files the way envoyproxy/ratelimit loads them. */
function loadEnvoy(files: string[]): {
  configs: unknown[]
  domains: Map<string, unknown>
  problems: string[]
} {
  const configs: unknown[] = []
  const problems: string[] = []
  files.forEach((file) => {
    try {
      // YAML 1.1 with merge keys, as envoyproxy/ratelimit's reader (yaml.v2) takes it.
      configs.push(parseYaml(readFileSync(file, 'utf8'), { version: '1.1', merge: true }))
    } catch (error) {
      problems.push(
        `${file}: error loading config file: ${(error as Error).message.split('\n')[0]}`
      )
      configs.push(undefined)
    }
  })
  if (problems.length > 0) return { configs, domains: new Map(), problems }
  const compiled = compileEnvoy(configs, (i) => ({ file: files[i]! }))
  return { configs, domains: compiled.domains, problems: compiled.problems }
}

/** Writes the rules document holding `file`'s Envoy configuration to a temporary file. */
function writeImported(file: string): string {
  const { configs } = loadEnvoy([file])
  const path = join(mkdtempSync(join(tmpdir(), 'rules-')), 'rules.json')
  writeFileSync(path, JSON.stringify({ version: 1, rules: [], domains: configs }))
  return path
}

function isYaml(file: string): boolean {
  return /\.ya?ml$/i.test(file)
}

function usage(problem: string): number {
  console.error(`${problem}\n\n${help()}`)
  return 2
}

try {
  const status = main(process.argv.slice(2))
  // An unexpected error in `rehearse` rejects: Node prints it and exits 1.
  if (typeof status === 'number') process.exitCode = status
  else void status.then((code) => (process.exitCode = code))
} catch (error) {
  process.exitCode = usage((error as Error).message)
}
