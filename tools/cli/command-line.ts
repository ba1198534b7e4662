/**
 * @module tools/cli/command-line
 * How every command-line entry of the project (`npm run rules`, `preflight`, `simulate`,
 * `simulate:scale`, `fuzz`, `bench`, `bench:profile`, and the package's `edge-rate-limiter`)
 * reads its options and explains itself. Each declares its options once, as data
 * ({@link CommandSpec}); from that, `-h` and `--help` print a usage that lists every option with
 * its default, and an unknown option is refused by name with a pointer to `--help`. Pure (no
 * `node:*` import), so that tests read the declarations in workerd too.
 */

/** One option of a command. */
export interface OptionSpec {
  /** The long name, without its dashes: `seed` for `--seed`. */
  name: string
  /** A one-letter alias, without its dash. */
  short?: string
  /** What the help calls its value (`<n>`); absent for a switch, which takes none. */
  value?: string
  /** The default, as the help shows it: a value, or words such as "off" or "none". */
  default: string
  /** What it does, in a phrase. */
  does: string
}

/** A command: how it is called, what it does, and its options. */
export interface CommandSpec {
  /** The usage lines, without `usage:`: `npm run simulate -- [options]`. */
  usage: string[]
  /** What the command does, a paragraph (wrapped by the help). */
  about?: string
  options: readonly OptionSpec[]
  /** Lines after the options, as written: subcommands, exit statuses. */
  notes?: string[]
}

/** What a command line asked for. */
export interface CommandLine {
  /** Each option given, by long name: its value, or `true` for a switch. */
  values: Record<string, string | true | undefined>
  /** The arguments that are not options, in order. */
  positionals: string[]
  /** `-h` or `--help` was given: print {@link helpText} and exit 0. */
  help: boolean
}

/** A command line the command cannot run: its entry prints the message and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** The exit status of a command line the command cannot run. */
export const USAGE_EXIT = 2

const WIDTH = 100
const OPTION_COLUMN = 24

const HELP_OPTION: OptionSpec = {
  name: 'help',
  short: 'h',
  default: 'off',
  does: 'print this help and exit',
}

/**
 * Reads a command line against a command's options. A lone `--` ends the options; what follows
 * is positional.
 *
 * @param spec - the command's options
 * @param argv - the arguments after the command's name
 * @param allowPositionals - whether the command takes arguments that are not options
 * @throws {UsageError} for an unknown option (named as given), a missing value, a value given
 *   to a switch, or an argument the command does not take
 */
export function readCommandLine(
  spec: CommandSpec,
  argv: readonly string[],
  allowPositionals = false
): CommandLine {
  const line: CommandLine = { values: {}, positionals: [], help: false }
  const byName = new Map(spec.options.map((option) => [option.name, option]))
  const byShort = new Map(
    spec.options.filter((option) => option.short).map((option) => [option.short!, option])
  )
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') {
      line.positionals.push(...argv.slice(i + 1))
      break
    }
    if (arg === '-h' || arg === '--help') {
      line.help = true
      continue
    }
    if (!arg.startsWith('-') || arg === '-') {
      if (!allowPositionals) throw new UsageError(`unexpected argument "${arg}"`)
      line.positionals.push(arg)
      continue
    }
    const [flag, inline] = arg.split(/=(.*)/s) as [string, string | undefined]
    const option = flag.startsWith('--') ? byName.get(flag.slice(2)) : byShort.get(flag.slice(1))
    if (!option) throw new UsageError(`unknown option ${flag}`)
    if (option.value === undefined) {
      if (inline !== undefined) throw new UsageError(`--${option.name} takes no value`)
      line.values[option.name] = true
      continue
    }
    const value = inline ?? argv[++i]
    if (value === undefined || (inline === undefined && /^--?[A-Za-z]/.test(value)))
      throw new UsageError(`--${option.name} needs a value ${option.value}`)
    line.values[option.name] = value
  }
  return line
}

/**
 * The message an entry prints for a command line it cannot run: the problem, and where the
 * options are listed.
 *
 * @param program - how the command is called, as the usage names it
 * @param error - what was wrong
 */
export function usageMessage(program: string, error: UsageError): string {
  return `${error.message}; see ${program} --help`
}

/**
 * The help: usage, what the command does, every option with its default, and the notes.
 *
 * @param spec - the command
 */
export function helpText(spec: CommandSpec): string {
  const [first = '', ...more] = spec.usage
  const lines = [`usage: ${first}`, ...more.map((usage) => `       ${usage}`)]
  if (spec.about) lines.push('', ...wrap(spec.about, WIDTH))
  lines.push('', 'options:')
  for (const option of [...spec.options, HELP_OPTION]) lines.push(...optionLines(option))
  if (spec.notes?.length) lines.push('', ...spec.notes)
  return lines.join('\n')
}

/**
 * One option's lines for a help: its spelling in a column, what it does and its default beside
 * it, wrapped.
 *
 * @param option - the option
 */
export function optionLines(option: OptionSpec): string[] {
  const short = option.short ? `-${option.short}, ` : ''
  const spelled = `  ${short}--${option.name}${option.value ? ` ${option.value}` : ''}`
  const text = wrap(`${option.does} (default: ${option.default})`, WIDTH - OPTION_COLUMN)
  const indent = ' '.repeat(OPTION_COLUMN)
  if (spelled.length >= OPTION_COLUMN - 1) return [spelled, ...text.map((part) => indent + part)]
  return text.map((part, i) => (i === 0 ? spelled.padEnd(OPTION_COLUMN) : indent) + part)
}

/**
 * Words wrapped into lines of at most `width` characters (a longer word stands alone).
 *
 * @param text - the words
 * @param width - the longest line
 */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else line = line === '' ? word : `${line} ${word}`
  }
  if (line !== '') lines.push(line)
  return lines
}
