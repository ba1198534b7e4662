/**
 * @module tools/cli/rules
 * The rules command line: check rules documents and put them in force. One entry of
 * {@link COMMANDS} per subcommand is all there is to one: its arguments, what it does, its
 * options and how it runs; the help, the option checks and the dispatch read them from there.
 * Inside the repository it runs as `npm run rules -- <command>` (`tools/rules-cli.ts`); in the
 * package, as `npx edge-rate-limiter rules <command>` (`tools/cli/main.ts`, bundled into
 * `lib/cli.js` by `npm run build:lib`), so a command added here ships with the package.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { RuleConfigError } from '../../src/errors'
import { compileEnvoy, parseRulesText, type RuleSet } from '../../src/rules'
import { REHEARSE_HELP, rehearseCommand } from '../rehearse/command'
import { listArgs, listedRevisions, putArgs, type PushTarget } from '../rules-push'
import {
  helpText,
  optionLines,
  readCommandLine,
  usageMessage,
  USAGE_EXIT,
  UsageError,
  type CommandLine,
  type OptionSpec,
  wrap,
} from './command-line'
import { withHint } from './suggest'

/** What the command line runs in: how it is called, and where the JSON Schema comes from. */
export interface RulesContext {
  /** How the help names the command: `npm run rules --` or `npx edge-rate-limiter rules`. */
  program: string
  /** The JSON Schema of rules documents, as `schema` prints it. */
  schema(): unknown
}

/** One subcommand. */
interface RulesCommand {
  /** Its arguments, as the help shows them. */
  args: string
  /** What it does. */
  does: string
  options: OptionSpec[]
  /** How many arguments it takes besides its options, at most (default 1). */
  most?: number
  /** Runs it; the exit status. */
  run?(line: CommandLine, context: RulesContext): number
  /**
   * Runs it on its own arguments (those after its name), which it reads itself; the exit status.
   * `usage` prints a problem with them, with the help's pointer, and returns the usage status.
   */
  own?(argv: string[], usage: (problem: string) => number): Promise<number>
}

/** The rules document a command reads when none is named. */
const DEFAULT_FILE = 'rules.json'

/** The help's last line. */
const EXITS = `[file] defaults to ${DEFAULT_FILE}. Exit status: 0 done, 1 invalid or failed, 2 usage.`

/** Every subcommand, in the order the help lists them. */
const COMMANDS: Record<string, RulesCommand> = {
  validate: {
    args: '[file]',
    does:
      'Checks a rules document (JSON) or an envoyproxy/ratelimit configuration (.yaml): every ' +
      'error with the path of its field and, for an unknown field, what was likely meant.',
    options: [],
    run: (line) => (validate(fileOf(line)) ? 0 : 1),
  },
  import: {
    args: '<envoy.yaml> [<envoy.yaml> ...]',
    does: 'Prints the rules document holding these Envoy configurations (under "domains").',
    most: Infinity,
    options: [
      {
        name: 'schema',
        value: '<path>',
        default: './rules.schema.json',
        does: 'the "$schema" the document names',
      },
    ],
    run: (line) => importEnvoy(line.positionals, line.values.schema as string | undefined),
  },
  push: {
    args: '[file]',
    does:
      'Validates the document, then writes it to the RULES KV namespace ("rules" and ' +
      '"rules:last-good", with the next revision): in force without a redeploy.',
    options: [
      {
        name: 'local',
        default: 'off',
        does: "write to wrangler dev's local namespace, not the deployed one",
      },
      {
        name: 'persist-to',
        value: '<dir>',
        default: '.wrangler/state',
        does: "with --local: wrangler dev's state directory",
      },
      {
        name: 'env',
        value: '<name>',
        default: 'none',
        does: "the wrangler environment whose RULES namespace to write (none: the top level's)",
      },
    ],
    run(line) {
      const file = fileOf(line)
      if (!validate(file)) return 1
      // An Envoy configuration goes to KV as the rules document that holds it.
      const path = isYaml(file) ? writeImported(file) : file
      return push(path, {
        local: line.values.local === true,
        persistTo: line.values['persist-to'] as string | undefined,
        env: line.values.env as string | undefined,
      })
    },
  },
  rehearse: {
    ...REHEARSE_HELP,
    most: Infinity,
    own: rehearseCommand,
  },
  schema: {
    args: '',
    does: 'Prints the JSON Schema of rules documents (what rules.schema.json holds).',
    most: 0,
    options: [],
    run(_line, context) {
      console.log(JSON.stringify(context.schema(), null, 2))
      return 0
    },
  },
  help: {
    args: '[command]',
    does: "Prints this help, or one command's.",
    options: [],
    run(line, context) {
      console.log(help(context.program, line.positionals[0]))
      return 0
    },
  },
}

/**
 * Runs the rules command line.
 *
 * @param argv - the arguments after `rules`: a command, its arguments and options
 * @param context - how it is called, and the schema source
 * @returns the exit status: 0 done, 1 invalid or failed, 2 usage (a promise for a command that
 *   reads files as streams: `rehearse`)
 */
export function runRules(argv: readonly string[], context: RulesContext): number | Promise<number> {
  const [name, ...rest] = argv
  if (name === '-h' || name === '--help') {
    console.log(help(context.program))
    return 0
  }
  const command = name === undefined ? undefined : COMMANDS[name]
  if (name === undefined || !command) {
    const problem =
      name === undefined
        ? 'no command'
        : `unknown ${name.startsWith('-') ? 'option' : 'command'} ${name}`
    console.error(usageMessage(context.program, new UsageError(problem)))
    return USAGE_EXIT
  }
  const program = `${context.program} ${name}`
  if (command.own) {
    if (rest.includes('--help') || rest.includes('-h')) {
      console.log(help(context.program, name))
      return 0
    }
    const usage = (problem: string) => {
      console.error(usageMessage(program, new UsageError(problem)))
      return USAGE_EXIT
    }
    // Named as every other command names it, before the command reads its own options.
    const known = new Set(command.options.map((option) => `--${option.name}`))
    const end = rest.indexOf('--')
    const unknown = (end < 0 ? rest : rest.slice(0, end)).find(
      (arg) => arg.startsWith('-') && arg !== '-' && !known.has(arg.split('=')[0]!)
    )
    if (unknown !== undefined) return usage(`unknown option ${unknown}`)
    return command.own([...rest], usage)
  }
  try {
    const line = readCommandLine(commandSpec(context.program, name), rest, true)
    if (line.help) {
      console.log(help(context.program, name))
      return 0
    }
    const most = command.most ?? 1
    if (line.positionals.length > most)
      throw new UsageError(`unexpected arguments: ${line.positionals.slice(most).join(' ')}`)
    return command.run!(line, context)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    console.error(usageMessage(program, error))
    return USAGE_EXIT
  }
}

/** One command as {@link helpText} reads it. */
function commandSpec(program: string, name: string) {
  const command = COMMANDS[name]!
  return {
    usage: [`${program} ${name} ${command.args}`.trimEnd()],
    about: command.does,
    options: command.options,
  }
}

/** The help: every command with its options, or one command's. */
function help(program: string, only?: string): string {
  if (only !== undefined && only in COMMANDS) {
    return helpText({
      ...commandSpec(program, only),
      notes: [EXITS],
    })
  }
  const lines = [`usage: ${program} <command> [options]`, '', 'commands:']
  for (const [name, command] of Object.entries(COMMANDS)) {
    lines.push(
      `  ${name} ${command.args}`.trimEnd(),
      ...wrap(command.does, 92).map((l) => `      ${l}`)
    )
    for (const option of command.options) lines.push(...optionLines(option).map((l) => `    ${l}`))
  }
  lines.push(
    '',
    ...optionLines({
      name: 'help',
      short: 'h',
      default: 'off',
      does: 'this help; after a command, its own',
    }),
    '',
    EXITS
  )
  return lines.join('\n')
}

function fileOf(line: CommandLine): string {
  return line.positionals[0] ?? DEFAULT_FILE
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
  let text: string
  let ruleSet: RuleSet
  try {
    text = readFileSync(file, 'utf8')
    ruleSet = parseRulesText(text, file)
  } catch (error) {
    if (error instanceof RuleConfigError) {
      const written: unknown = JSON.parse(text!)
      // One line per error, each naming the file and the field, as compilers print them.
      for (const problem of error.problems) console.error(`${file}: ${withHint(problem, written)}`)
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
  if (files.length === 0) throw new UsageError('import needs at least one Envoy YAML file')
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
