import { describe, expect, it } from 'vitest'
import { readCommand, UsageError } from '../../../tools/scale/options'
import { csvOf, CSV_HEADER, fileStem, tableHeader, tableRow } from '../../../tools/scale/report'
import { runScale } from '../../../tools/scale/run'
import { IDEAL_WORLD, type RunOptions } from '../../../tools/scale/run-options'
import { planScenario } from '../../../tools/scale/scenarios'
import { recovery, type Summary } from '../../../tools/scale/summary'
import { buildWorld } from '../../../tools/scale/world'
import { scaleChartSvg } from '../../../tools/scale/chart'

/** A run small enough for a test: 20 isolates, 4 s, the small key's limit unless told. */
const small = (options: Partial<RunOptions> = {}): RunOptions => ({
  scenario: 'steady',
  mode: 'leased',
  algorithm: 'sliding-window',
  isolates: 20,
  locations: 20,
  demand: 0.02,
  seconds: 4,
  seed: 7,
  serviceMs: 1,
  queueBound: 100,
  meanLifeS: 2,
  restartMs: 200,
  warmupS: 1,
  failMode: 'open',
  world: IDEAL_WORLD,
  ...options,
})

const withoutWallTime = ({ wallSeconds: _, ...rest }: { wallSeconds: number }) => rest

describe('a simulated run', () => {
  it('is the same for the same seed, and another for another', { timeout: 30_000 }, async () => {
    const a = await runScale(small())
    const b = await runScale(small())
    const c = await runScale(small({ seed: 8 }))
    expect(withoutWallTime(a.summary)).toEqual(withoutWallTime(b.summary))
    expect(a.rows).toEqual(b.rows)
    expect(c.summary.requests).not.toBe(a.summary.requests)
    // A scarce key, where each lease book asks at its own point of a horizon: the same too.
    const scarce = small({ scenario: 'small-key', demand: 4, seconds: 8 })
    const [d, e] = [await runScale(scarce), await runScale(scarce)]
    expect(d.summary.earlyDenialShare).toBeGreaterThan(0)
    expect(d.rows).toEqual(e.rows)
    // 2,000 requests/s for 4 s, with churn (mean life 2 s).
    expect(a.summary.requests).toBeGreaterThan(5_000)
    expect(a.summary.isolatesStarted).toBeGreaterThan(10)
    // Those started after the warm-up: each one's first wait.
    expect(a.summary.coldIsolates.count).toBeGreaterThan(10)
    expect(a.summary.coldIsolates.count).toBeLessThanOrEqual(a.summary.isolatesStarted)
  })

  it(
    'keeps the small key under its limit in both modes, the exact one never denying early',
    {
      timeout: 30_000,
    },
    async () => {
      const summaries = []
      for (const mode of ['leased', 'exact'] as const) {
        const { summary, rows } = await runScale(
          small({ scenario: 'small-key', mode, demand: 3, seconds: 6 })
        )
        expect(summary.overAdmitted).toBe(0)
        expect(summary.fullestWindow.admitted).toBeLessThanOrEqual(10)
        expect(rows.slice(1).every((row) => row.admitted <= 10)).toBe(true)
        expect(summary.latencyMs.p50).toBeGreaterThan(0)
        summaries.push(summary)
      }
      const [leased, exact] = summaries as [Summary, Summary]
      expect(exact.earlyDenialShare).toBe(0)
      // Isolates that see under a unit per horizon hold nothing and ask for each request (a
      // scarce root quiets none of them): the root is called no more than exact's object, and
      // admits about as much.
      expect(leased.objectCallsPerSecond.mean).toBeLessThanOrEqual(exact.objectCallsPerSecond.mean)
      expect(leased.admittedShare).toBeGreaterThan(0.95)
    }
  )

  it(
    'overloads the object when service time × call rate exceeds 1 (its lessees then deny, never let through), and not below',
    {
      timeout: 30_000,
    },
    async () => {
      // The root hears from regional objects only (about 9 calls/s here): 150 ms a call
      // overloads it, and a queue of one answers "overloaded" before their calls time out.
      const busy = await runScale(small({ serviceMs: 150, queueBound: 1 }))
      expect(busy.summary.objectCallsPerSecond.mean * 0.15).toBeGreaterThan(1)
      expect(busy.summary.overloaded).toBeGreaterThan(0)
      // An overloaded object is back-pressure: requests that needed it are denied, none let through.
      expect(busy.summary.failedOpen).toBe(0)
      expect(busy.summary.earlyDenialShare).toBeGreaterThan(0)
      const idle = await runScale(small({ serviceMs: 0.1 }))
      expect(idle.summary.overloaded + idle.summary.overloadedInWarmup).toBe(0)
      expect(idle.summary.failedOpen).toBe(0)
    }
  )

  it(
    'starts every location at once (a deploy) without an overloaded answer from the root',
    { timeout: 30_000 },
    async () => {
      // 300 locations, each with an isolate, all cold, at 1.1 times scenario S's limit. Each
      // location's first call to the root, at its own point of the opening, asks for its cold
      // isolates at the mean demand of those that measured theirs: one call, not one more each
      // time they are back.
      const { summary } = await runScale(
        small({ isolates: 300, locations: 300, demand: 1.1, seconds: 3, meanLifeS: 300 })
      )
      expect(summary.overloaded + summary.overloadedInWarmup).toBe(0)
      expect(summary.overAdmitted).toBe(0)
      expect(summary.failedOpen).toBe(0)
    }
  )

  it(
    'fails what was in flight when the object restarts, closed when the rule says so',
    {
      timeout: 30_000,
    },
    async () => {
      const { summary } = await runScale(
        small({
          scenario: 'restart',
          demand: 0.05,
          failMode: 'closed',
          restartMs: 8_000,
          seconds: 12,
        })
      )
      const open = await runScale(small({ scenario: 'steady', demand: 0.05, failMode: 'closed' }))
      expect(summary.overAdmitted).toBe(0)
      // Requests that needed the object while it was away (8 s: past what the regional objects
      // hold, and the 1 s timeout) were refused.
      expect(summary.earlyDenialShare).toBeGreaterThan(open.summary.earlyDenialShare)
    }
  )
})

describe('scenarios', () => {
  const world = buildWorld(300)
  const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0)

  it('shift: within a second, half of each continent’s traffic is elsewhere', () => {
    const plan = planScenario('shift', 'sliding-window', world, 1, 180_000)
    const before = plan.demandAt(0).weights
    const after = plan.demandAt(91_000).weights
    const europe = (w: readonly number[]) =>
      sum(world.locations.filter((l) => l.continent === 'europe').map((l) => w[l.index]!))
    const america = (w: readonly number[]) =>
      sum(world.locations.filter((l) => l.continent === 'north-america').map((l) => w[l.index]!))
    expect(plan.shiftAtMs).toBe(90_000)
    expect(sum(after)).toBeCloseTo(1, 9)
    // North America keeps half, and gets half of South America's; Europe gets half of North America's.
    expect(america(after)).toBeCloseTo(america(before) / 2 + 0.03, 6)
    expect(europe(after)).toBeCloseTo(europe(before) / 2 + america(before) / 2, 6)
    expect(plan.demandAt(89_900).weights).toBe(before)
  })

  it('burst: the busiest location sends ten times its demand for 5 s', () => {
    const plan = planScenario('burst', 'token-bucket', world, 1, 60_000, 1)
    const base = plan.demandAt(0)
    const burst = plan.demandAt(30_000)
    // A burst of one second of the rate; without one, the limit (as a rule without `burst`).
    expect(plan.policy).toEqual({
      algorithm: 'token-bucket',
      limit: 6e6,
      periodMs: 60_000,
      burst: 1e5,
    })
    expect(planScenario('burst', 'token-bucket', world, 1, 60_000).policy).toMatchObject({
      burst: 6e6,
    })
    const busiest = base.weights.indexOf(Math.max(...base.weights))
    expect(burst.weights[busiest]).toBeCloseTo(base.weights[busiest]! * 10, 12)
    expect(burst.ratePerMs).toBeCloseTo(100 * (1 + 9 * base.weights[busiest]!), 9)
    expect(plan.demandAt(35_000)).toEqual(base)
  })
})

describe('recovery after a shift', () => {
  it('is 0 without a dip, the start of the window that holds 99 % after one, null if never', () => {
    const flat = new Int32Array(400).fill(1000)
    expect(recovery(flat, 20_000)).toBe(0)
    const dip = flat.slice()
    for (let k = 200; k < 215; k++) dip[k] = 500
    expect(recovery(dip, 20_000)).toBe(1.5)
    const never = flat.slice()
    never.fill(0, 200)
    expect(recovery(never, 20_000)).toBeNull()
  })
})

describe('the command line', () => {
  it('runs every combination of the lists it is given', () => {
    const { runs, json } = readCommand([
      '--isolates',
      '10,3000',
      '--demand',
      '0.9,1.1',
      '--algorithm',
      'token-bucket',
      '--seconds',
      '20',
      '--json',
    ])
    expect(json).toBe(true)
    expect(runs.map((r) => [r.isolates, r.locations, r.demand])).toEqual([
      [10, 10, 0.9],
      [10, 10, 1.1],
      [3000, 300, 0.9],
      [3000, 300, 1.1],
    ])
    expect(runs[0]).toMatchObject({ algorithm: 'token-bucket', seconds: 20, meanLifeS: 300 })
    expect(readCommand(['--scenario', 'shift']).runs[0]!.demand).toBe(1.1)
    expect(readCommand(['--isolate-life', '0']).runs[0]!.meanLifeS).toBe(Infinity)
    expect(readCommand(['--burst', '1.5']).runs[0]!.burstS).toBe(1.5)
    expect(readCommand([]).runs[0]!.burstS).toBeUndefined()
  })

  it.each([
    [['--isolate', '5'], 'unknown option --isolate'],
    [['--seconds'], '--seconds needs a value <n>'],
    [['--seconds', 'ten'], '--seconds must be a whole number from 1 to 3600, not "ten"'],
    [['--mode', 'exactly'], '--mode must be one of leased, exact, not "exactly"'],
    [['--demand', '-1'], '--demand must be a number from 0.001 to 100, not "-1"'],
    [['--burst', '0'], '--burst must be a number from 0.001 to 86400, not "0"'],
    [['--isolates', '10', '--locations', '20'], '--locations (20) must not exceed --isolates (10)'],
    [['300'], 'unexpected argument "300"'],
  ])('refuses %j: %s', (argv, message) => {
    expect(() => readCommand(argv)).toThrow(new UsageError(message))
  })
})

describe('what a run writes', () => {
  it('a table row, a CSV row per second and a chart', { timeout: 30_000 }, async () => {
    const { summary, rows } = await runScale(small({ seconds: 2 }))
    expect(tableHeader().split(/\s+/)).toContain('calls/s')
    expect(tableRow(summary)).toMatch(/^steady\s+leased\s+sliding-window\s+20\s+20\s+0.02\s/)
    const csv = csvOf(rows).trim().split('\n')
    expect(csv[0]).toBe(CSV_HEADER)
    expect(csv).toHaveLength(3)
    const svg = scaleChartSvg(summary, rows)
    expect(svg).toMatch(/^<svg/)
    expect(svg).toContain('Requests per second')
    // A bucket's burst, when set, names the files and the chart.
    const bucket = { ...summary, algorithm: 'token-bucket', burstSeconds: 1 }
    expect(fileStem(bucket)).toBe('steady-leased-token-bucket-b1-i20-d0.02')
    expect(fileStem(summary)).toBe('steady-leased-sliding-window-i20-d0.02')
    expect(scaleChartSvg(bucket, rows)).toContain('token-bucket (burst 1 s)')
  })
})
