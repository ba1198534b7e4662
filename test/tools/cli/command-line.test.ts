import { describe, expect, it } from 'vitest'
import {
  helpText,
  readCommandLine,
  usageMessage,
  UsageError,
  type CommandSpec,
} from '../../../tools/cli/command-line'

const spec: CommandSpec = {
  usage: ['tool [options] <file>'],
  about: 'Does a thing.',
  options: [
    { name: 'seed', short: 's', value: '<n>', default: '4', does: 'seeds it' },
    { name: 'json', default: 'off', does: 'prints JSON' },
  ],
  notes: ['Exit status: 0 done.'],
}

describe('a command line', () => {
  it('reads values, switches, short names and positionals', () => {
    expect(
      readCommandLine(spec, ['--seed', '7', '--json', 'a', '-s=9', '--', '--b'], true)
    ).toEqual({
      values: { seed: '9', json: true },
      positionals: ['a', '--b'],
      help: false,
    })
    expect(readCommandLine(spec, ['--seed=3']).values).toEqual({ seed: '3' })
  })

  it.each(['-h', '--help'])('answers %s', (flag) => {
    expect(readCommandLine(spec, ['--seed', '1', flag]).help).toBe(true)
  })

  it.each([
    [['--sed', '1'], 'unknown option --sed'],
    [['-x'], 'unknown option -x'],
    [['--seed'], '--seed needs a value <n>'],
    [['--seed', '--json'], '--seed needs a value <n>'],
    [['--json=yes'], '--json takes no value'],
    [['file'], 'unexpected argument "file"'],
  ])('refuses %j: %s', (argv, message) => {
    expect(() => readCommandLine(spec, argv)).toThrow(new UsageError(message))
  })

  it('names the problem and points at --help', () => {
    expect(usageMessage('npm run tool --', new UsageError('unknown option --sed'))).toBe(
      'unknown option --sed; see npm run tool -- --help'
    )
  })

  it('lists every option with its default in the help', () => {
    expect(helpText(spec)).toBe(
      [
        'usage: tool [options] <file>',
        '',
        'Does a thing.',
        '',
        'options:',
        '  -s, --seed <n>        seeds it (default: 4)',
        '  --json                prints JSON (default: off)',
        '  -h, --help            print this help and exit (default: off)',
        '',
        'Exit status: 0 done.',
      ].join('\n')
    )
  })

  it('wraps long lines under the option', () => {
    const long: CommandSpec = {
      usage: ['tool'],
      options: [
        {
          name: 'a-very-long-option-name',
          value: '<x>',
          default: 'none',
          does: 'word '.repeat(30).trim(),
        },
      ],
    }
    const lines = helpText(long).split('\n')
    expect(lines).toContain('  --a-very-long-option-name <x>')
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100)
    expect(lines.at(-2)).toMatch(/^ {24}.*\(default: none\)$/)
  })
})
