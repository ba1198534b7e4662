import { describe, expect, it } from 'vitest'
import { helpText, UsageError } from '../../../tools/cli/command-line'
import { FLEET, readCommand } from '../../../tools/fleet/options'

describe('the fleet command line', () => {
  it('runs the defaults once, and root-down once per fail mode unless one is named', () => {
    expect(readCommand([]).runs).toEqual([
      {
        scenario: 'steady',
        algorithm: 'sliding-window',
        demand: 1.2,
        isolates: 12,
        locations: 4,
        seconds: 40,
        seed: 1,
        limit: 20_000,
        periodMs: 10_000,
        cost: 10,
        failMode: 'open',
      },
    ])
    const rootDown = readCommand(['--scenario', 'root-down']).runs
    expect(rootDown.map((run) => run.failMode)).toEqual(['open', 'closed'])
    const closed = readCommand(['--scenario=root-down', '--fail-mode', 'closed']).runs
    expect(closed.map((run) => run.failMode)).toEqual(['closed'])
  })

  it("runs CI's short steady run and the deploy fault for --check", () => {
    const command = readCommand(['--check', '--json'])
    expect(command.runs.map(({ scenario, seconds }) => ({ scenario, seconds }))).toEqual([
      { scenario: 'steady', seconds: 20 },
      { scenario: 'deploy', seconds: 25 },
    ])
    expect(command).toMatchObject({ check: true, json: true, compare: false, help: false })
  })

  it.each([['-h'], ['--help'], ['--scenario', 'nope', '--help']])(
    'asks for the help with %j',
    (...argv) => {
      expect(readCommand(argv)).toMatchObject({ help: true, runs: [] })
    }
  )

  it('lists every option with its default in the help', () => {
    const help = helpText(FLEET)
    for (const option of FLEET.options) expect(help).toContain(`--${option.name}`)
    expect(help.match(/\(default: /g)).toHaveLength(FLEET.options.length + 1)
  })

  it.each([
    [['--bogus'], 'unknown option --bogus'],
    [['--seconds'], '--seconds needs a value <n>'],
    [['--json=1'], '--json takes no value'],
    [['steady'], 'unexpected argument "steady"'],
    [['--demand', '9'], '--demand must be a number from 0.5 to 3, not "9"'],
    [['--locations', '20'], '--locations (20) must not exceed --isolates (12)'],
  ])('refuses %j: %s', (argv, message) => {
    expect(() => readCommand(argv)).toThrow(new UsageError(message))
  })
})
