import type { AccuracyRow } from '../../tools/simulate/accuracy'
import { whichFits } from '../../tools/simulate/choose'
import { describe, expect, it } from 'vitest'
import { parseRules } from '../../src/rules'
import { accuracyOf, oracleAdmits } from '../../tools/simulate/accuracy'
import { ownHistoryAgreement } from '../../tools/simulate/agreement'
import { ruleChartSvg, type ChartRun } from '../../tools/simulate/chart'
import {
  generateProfile,
  isIdle,
  mulberry32,
  DEFAULT_PROFILE,
  type Arrival,
} from '../../tools/simulate/profile'
import { accuracyMarkdown, sameDecisionNotes, sameDecisionsAs } from '../../tools/simulate/report'
import {
  compileEach,
  defaultRules,
  isShaper,
  MissingStatusError,
  runRules,
} from '../../tools/simulate/run'
import { CSV_HEADER, perSecond, secondsSpanned, toCsv } from '../../tools/simulate/stats'
import { parseTrace, TraceError } from '../../tools/simulate/trace'
import { busiestKeySeries, fullestWindow, worstOvershoot } from '../../tools/simulate/windows'

const profile = generateProfile({ ...DEFAULT_PROFILE, seed: 4 })

/** Requests per second 0 … 119. */
function perSecondCounts(arrivals: readonly Arrival[], seconds = 120): number[] {
  const counts = new Array<number>(seconds).fill(0)
  for (const { t } of arrivals) counts[Math.floor(t / 1000)]!++
  return counts
}

const at = (...times: number[]): Arrival[] => times.map((t) => ({ t, key: 'k', cost: 1 }))

/** The rules of a document, compiled by the project's parser. */
function rules(...list: Record<string, unknown>[]) {
  return parseRules({ version: 1, rules: list }, 'test').rules
}

const global = (algorithm: string, extra: Record<string, unknown> = {}) => ({
  id: algorithm,
  key: [],
  algorithm,
  limit: 500,
  period: '1s',
  ...extra,
})

describe('the default profile', () => {
  const counts = perSecondCounts(profile)
  const idle = counts.map((_, s) => isIdle(s * 1000, DEFAULT_PROFILE))
  const burst = counts.map((_, s) => s % 17 < 2)

  it("is silent for 3 s every 21 s (its generator's code; its prose says 20), bursts included", () => {
    const silent = counts.flatMap((count, s) => (count === 0 ? [s] : []))
    expect(silent).toEqual([0, 1, 2, 21, 22, 23, 42, 43, 44, 63, 64, 65, 84, 85, 86, 105, 106, 107])
    expect(silent.every((s) => idle[s])).toBe(true)
  })

  it('sends about 600 requests per second from 30 senders outside bursts and silences', () => {
    const steady = counts.filter((_, s) => !idle[s] && !burst[s])
    const mean = steady.reduce((a, b) => a + b, 0) / steady.length
    expect(mean).toBeGreaterThan(580)
    expect(mean).toBeLessThan(630)
    for (const count of steady) expect(count).toBeGreaterThan(500)
  })

  it('adds about 500 requests per second for 2 s every 17 s, unless a silence swallows them', () => {
    const bursts = counts.flatMap((count, s) => (burst[s] && !idle[s] ? [count] : []))
    expect(bursts).toHaveLength(11) // 17-18, 34-35, 51-52, 68-69, 102-103, 119
    for (const count of bursts) expect(count).toBeGreaterThan(1000)
    const only = generateProfile({ ...DEFAULT_PROFILE, seed: 4, senders: 0, idleForMs: 0 })
    expect(only.filter((a) => a.t >= 17_000 && a.t < 19_000)).toHaveLength(1000)
    expect(only.filter((a) => a.t >= 2_000 && a.t < 17_000)).toHaveLength(0)
  })

  it('is sorted, global, of cost 1, and the same for the same seed', () => {
    expect(profile.every((a, i) => i === 0 || profile[i - 1]!.t <= a.t)).toBe(true)
    expect(new Set(profile.map((a) => `${a.key}/${a.cost}`))).toEqual(new Set(['global/1']))
    expect(generateProfile({ ...DEFAULT_PROFILE, seed: 4 })).toEqual(profile)
    expect(generateProfile({ ...DEFAULT_PROFILE, seed: 5 })).not.toEqual(profile)
  })

  it('draws from a seeded PRNG in [0, 1)', () => {
    const a = mulberry32(4)
    const b = mulberry32(4)
    const draws = Array.from({ length: 1000 }, () => a())
    expect(draws).toEqual(Array.from({ length: 1000 }, () => b()))
    expect(draws.every((x) => x >= 0 && x < 1)).toBe(true)
  })
})

describe('per-second aggregation', () => {
  it('counts arrivals by arrival second and executions by arrival + delay', () => {
    const rows = perSecond(
      [100, 900, 1500, 2500],
      { allowed: [true, false, true, true], delayMs: [0, 0, 800, 0] },
      4
    )
    expect(toCsv(rows).split('\n')).toEqual([
      CSV_HEADER,
      '2,1,1,1,0',
      '1,1,0,0,0',
      '1,1,0,2,400',
      '0,0,0,0,0',
      '',
    ])
    expect(CSV_HEADER).toBe(
      'TotalRequests,SuccessRequests,FailRequests,ExecutedRequests,AverageExecuteTime'
    )
  })

  it('spans through the last arrival and the last execution', () => {
    expect(secondsSpanned([0, 2500], [{ allowed: [true, true], delayMs: [0, 900] }])).toBe(4)
    expect(secondsSpanned([0, 2500], [{ allowed: [true, false], delayMs: [0, 900] }])).toBe(3)
  })
})

describe('trace parsing', () => {
  it('reads CSV with a header, cost optional, sorted stably by t', () => {
    const text = 't,key,cost\r\n200,b,2\r\n100,"a,1",\r\n\r\n100,c,1\r\n'
    expect(parseTrace(text, 'trace.csv')).toEqual([
      { t: 100, key: 'a,1', cost: 1 },
      { t: 100, key: 'c', cost: 1 },
      { t: 200, key: 'b', cost: 2 },
    ])
    expect(parseTrace('key,t\nx,5\n', 'trace.csv')).toEqual([{ t: 5, key: 'x', cost: 1 }])
  })

  it('reads the response status a rule counting responses needs, from either format', () => {
    expect(parseTrace('t,key,status\n5,ann,401\n9,ann,\n', 'trace.csv')).toEqual([
      { t: 5, key: 'ann', cost: 1, status: 401 },
      { t: 9, key: 'ann', cost: 1 },
    ])
    expect(parseTrace('{"t":5,"key":"ann","status":200}\n', 'trace.jsonl')).toEqual([
      { t: 5, key: 'ann', cost: 1, status: 200 },
    ])
  })

  it('reads JSON Lines', () => {
    const text = '{"t":50,"key":"a","cost":3}\n\n{"t":10,"key":"b"}\n'
    expect(parseTrace(text, 'trace.jsonl')).toEqual([
      { t: 10, key: 'b', cost: 1 },
      { t: 50, key: 'a', cost: 3 },
    ])
  })

  it.each([
    ['t,key\n1,a\nx,b\n', 'trace.csv:3: "t" must be a number'],
    ['t,key\n1,a,9\n', 'trace.csv:2: expected 2 fields'],
    ['t,key,cost\n1,a,0\n', 'trace.csv:2: "cost" must be a whole number'],
    ['time,key\n1,a\n', 'trace.csv:1: expected a header'],
    ['t,key\n1,"a\n', 'trace.csv:2: unterminated quoted field'],
    ['{"t":1,"key":"a"}\n{"t":2,"key":"a"\n', 'trace.csv:2: not valid JSON'],
    ['{"t":1,"key":"a"}\n{"t":-1,"key":"a"}\n', 'trace.csv:2: "t" must be a number'],
    ['{"t":1,"key":""}\n', 'trace.csv:1: "key" must be a non-empty string'],
    ['{"t":1,"key":"a","cost":1.5}\n', 'trace.csv:1: "cost" must be a whole number'],
    ['\n\n', 'trace.csv: the trace has no requests'],
    ['t,key,status\n1,a,99\n', 'trace.csv:2: "status" must be an HTTP status from 100 to 599'],
    ['{"t":1,"key":"a","status":"401"}\n', 'trace.csv:1: "status" must be an HTTP status'],
  ])('rejects %j with the line number', (text, message) => {
    expect(() => parseTrace(text, 'trace.csv')).toThrow(TraceError)
    expect(() => parseTrace(text, 'trace.csv')).toThrow(message)
  })
})

describe('the sliding-log oracle', () => {
  it('admits iff the units in (t − period, t] plus the cost fit, per key', () => {
    const arrivals: Arrival[] = [
      { t: 0, key: 'a', cost: 1 },
      { t: 0, key: 'a', cost: 1 },
      { t: 0, key: 'a', cost: 1 }, // 3rd unit in the window
      { t: 0, key: 'b', cost: 1 }, // another key
      { t: 999, key: 'a', cost: 1 }, // t = 0 is still in (−1, 999]
      { t: 1000, key: 'a', cost: 1 }, // t = 0 has left (0, 1000]
      { t: 1000, key: 'a', cost: 3 }, // more than the limit never fits
      { t: 1000, key: 'a', cost: 1 },
      { t: 1500, key: 'a', cost: 1 },
    ]
    expect(oracleAdmits(arrivals, undefined, 2, 1000)).toEqual([
      true,
      true,
      false,
      true,
      false,
      true,
      false,
      true,
      false,
    ])
  })

  it('measures the worst overshoot over all windows, per key', () => {
    const charges = (times: number[], key = 'k') => times.map((t) => ({ t, cost: 1, key }))
    expect(worstOvershoot(charges([0, 500, 999, 1000]), 2, 1000)).toBe(1)
    expect(worstOvershoot(charges([0, 1000, 2000, 3000]), 1, 1000)).toBe(0)
    expect(worstOvershoot([...charges([0, 1]), ...charges([0, 1], 'j')], 2, 1000)).toBe(0)
    expect(worstOvershoot(charges([5, 5, 5]), 1, 1000)).toBe(2)
    expect(fullestWindow([...charges([0, 900]), ...charges([50, 60, 70], 'j')], 1000)).toEqual({
      units: 3,
      t: 70,
      key: 'j',
    })
  })

  it('samples the busiest key’s window every step', () => {
    const charges = [
      ...[0, 0, 150].map((t) => ({ t, cost: 1, key: 'a' })),
      { t: 120, cost: 3, key: 'b' },
    ]
    // s = 0: a has 2; s = 100: still 2; s = 200, 300: b's 3 (a has 1); s = 400: empty.
    expect(busiestKeySeries(charges, 200, 100, 6)).toEqual([2, 2, 3, 3, 0, 0])
  })

  it('agrees with the project’s sliding log on every request of the profile', () => {
    const [run] = runRules(profile, rules(global('sliding-log')))
    expect(run!.allowed).toEqual(oracleAdmits(profile, run!.keys, 500, 1000))
  })
})

describe('accuracy', () => {
  it('catches fixed-window admitting twice the limit across a boundary; the oracle does not', () => {
    const arrivals = [...at(...new Array(500).fill(999)), ...at(...new Array(500).fill(1000))]
    const [run] = runRules(arrivals, rules(global('fixed-window')))
    expect(run!.allowed.every(Boolean)).toBe(true)
    const row = accuracyOf(arrivals, {
      id: 'fixed-window',
      algorithm: 'fixed-window',
      limit: 500,
      periodMs: 1000,
      byExecution: false,
      ...run!,
    })
    expect(row).toMatchObject({ allowed: 1000, oracleAllowed: 500, overshoot: 500 })
    expect(row.fullest).toEqual({ units: 1000, t: 1000, key: 'fixed-window' })
    // On its own history the 500 at t = 1000 come on top of a full window: all wrongly allowed.
    expect(row.agreement.all).toEqual({ judged: 1000, wronglyAllowed: 500, wronglyDenied: 0 })
    expect(row.agreement.bands[3]).toEqual({ judged: 500, wronglyAllowed: 500, wronglyDenied: 0 })
    const oracle = oracleAdmits(arrivals, undefined, 500, 1000)
    const admitted = arrivals.filter((_, i) => oracle[i])
    expect(worstOvershoot(admitted, 500, 1000)).toBe(0)
    expect(accuracyMarkdown([row], [])).toContain(
      '| fixed-window | fixed-window | 1000 | 1000 | 500 | +500 (+100.00%) | 500 units (100.00%) | 0 units |'
    )
  })

  it('judges the shaper by execution time: it spreads a burst out', () => {
    const shaper = rules(global('leaky-bucket', { burst: 500, mode: 'shape', maxWait: '1s' }))
    const arrivals = at(...new Array(800).fill(0))
    const [run] = runRules(arrivals, shaper)
    expect(isShaper(run!.rule)).toBe(true)
    expect(run!.delayMs.slice(0, 3)).toEqual([0, 2, 4])
    const spec = { id: 'shaper', algorithm: 'leaky-bucket', limit: 500, periodMs: 1000 }
    const row = accuracyOf(arrivals, { ...spec, byExecution: true, ...run! })
    expect(row.overshoot).toBe(0)
    // Its 300 denials came behind a full queue, not from a miscount.
    expect(row.allowed).toBe(500)
    expect(row.agreement.all).toEqual({ judged: 800, wronglyAllowed: 0, wronglyDenied: 0 })
  })
})

describe('running rules', () => {
  it('skips rules this build rejects and keeps the rest', () => {
    const { ruleSet, skipped } = compileEach([
      ...defaultRules(),
      global('no-such-algorithm', { id: 'bogus' }),
    ])
    const ids = ruleSet.rules.map((rule) => rule.id)
    expect(ids).toEqual(expect.arrayContaining(['fixed-window', 'sliding-window', 'token-bucket']))
    expect(ids).not.toContain('bogus')
    expect(skipped).toEqual([expect.stringMatching(/^skipped bogus: .*not an algorithm/)])
  })

  it('keeps one counter per trace key for a keyed rule, one for all under key []', () => {
    const arrivals: Arrival[] = ['a', 'b', 'a'].map((key) => ({ t: 0, key, cost: 1 }))
    const keyed = { id: 'per-ip', key: ['ip'], algorithm: 'fixed-window', limit: 1, period: '1s' }
    const [perIp, all] = runRules(arrivals, rules(keyed, { ...keyed, id: 'all', key: [] }))
    expect(perIp!.allowed).toEqual([true, true, false])
    expect(new Set(perIp!.keys).size).toBe(2)
    expect(all!.allowed).toEqual([true, false, false])
    expect(
      sameDecisionNotes([
        { id: 'x', ...perIp! },
        { id: 'y', ...perIp! },
      ])
    ).toEqual(['y allowed and denied exactly the requests x did.'])
    expect(
      sameDecisionsAs([
        { id: 'x', ...perIp! },
        { id: 'z', ...all! },
        { id: 'y', ...perIp! },
      ])
    ).toEqual([undefined, undefined, 'x'])
  })
})

describe('rules counting responses (countOn) on a trace', () => {
  const lockout = {
    id: 'login-failures',
    key: ['header:x-account'],
    algorithm: 'sliding-window',
    limit: 3,
    period: '1m',
    penalty: '15m',
    countOn: { status: [401] },
  }

  it('counts failed attempts only, and locks the key once they are over the limit', () => {
    const statuses = [200, 401, 401, 200, 401, 200, 401, 200]
    const arrivals: Arrival[] = statuses.map((status, i) => ({
      t: i * 1000,
      key: 'ann',
      cost: 1,
      status,
    }))
    // Later, inside the lock but past the window: still refused; after the lock: allowed.
    arrivals.push({ t: 5 * 60_000, key: 'ann', cost: 1, status: 200 })
    arrivals.push({ t: 6_000 + 15 * 60_000 + 1, key: 'ann', cost: 1, status: 200 })
    const [outcome] = runRules(arrivals, rules(lockout))
    // Three failures fill the limit; the next attempt, whatever its answer, starts the lock.
    const allowed = [true, true, true, true, true, false, false, false, false, true]
    expect(outcome!.allowed).toEqual(allowed)
  })

  it('needs a status for every request', () => {
    const arrivals: Arrival[] = [{ t: 0, key: 'ann', cost: 1 }]
    expect(() => runRules(arrivals, rules(lockout))).toThrow(MissingStatusError)
    expect(() => runRules(arrivals, rules(lockout))).toThrow(
      'rule login-failures counts responses (countOn): give every request of the trace a "status"'
    )
  })
})

describe('same-history agreement', () => {
  it('judges each decision against an exact log of what the rule itself admitted', () => {
    // limit 2 per 1000 ms; decisions made up by hand, one key over its limit and one within it.
    const arrivals: Arrival[] = [
      { t: 0, key: 'a', cost: 1 }, // window holds 0: fits, allowed (right)
      { t: 0, key: 'a', cost: 1 }, // holds 1 (50 %): fits, allowed (right)
      { t: 0, key: 'a', cost: 1 }, // holds 2 (full): allowed (wrong)
      { t: 500, key: 'a', cost: 1 }, // holds 3: denied (right)
      { t: 100, key: 'b', cost: 1 }, // holds 0: denied (wrong, 2 units of room)
      { t: 1000, key: 'a', cost: 1 }, // t = 0 has left: holds 1 (t = 500 was denied); allowed
      { t: 1000, key: 'a', cost: 1 }, // holds 1: denied (wrong, 1 unit of room)
    ].sort((x, y) => x.t - y.t)
    const decided = new Map([
      ['0a', [true, true, true]],
      ['500a', [false]],
      ['100b', [false]],
      ['1000a', [true, false]],
    ])
    const allowed = arrivals.map(({ t, key }) => decided.get(`${t}${key}`)!.shift()!)
    const keys = arrivals.map((a) => a.key)
    const oracle = oracleAdmits(arrivals, keys, 2, 1000)
    const agreement = ownHistoryAgreement(
      arrivals,
      { limit: 2, periodMs: 1000, byExecution: false, keys, allowed, delayMs: [] },
      oracle
    )
    expect(agreement.all).toEqual({ judged: 7, wronglyAllowed: 1, wronglyDenied: 2 })
    expect(agreement.bands).toEqual([
      { judged: 3, wronglyAllowed: 0, wronglyDenied: 1 }, // below 50 %: a@0, b@100, a@1000
      { judged: 2, wronglyAllowed: 0, wronglyDenied: 1 }, // 50–90 %: the second a@0 and a@1000
      { judged: 0, wronglyAllowed: 0, wronglyDenied: 0 },
      { judged: 2, wronglyAllowed: 1, wronglyDenied: 0 }, // at or over: a@0 (3rd), a@500
    ])
    // The oracle denies some of a's requests, none of b's: b is the key within the limit.
    expect(agreement).toMatchObject({ keys: 2, keysWithinLimit: 1, underAdmission: 2 })
    expect(agreement.withinLimit).toEqual({ judged: 1, wronglyAllowed: 0, wronglyDenied: 1 })
  })

  it('finds the sliding-window counter denying with room left after a bunched window', () => {
    // Four at 0 fill window [0, 1000). At 1500 the estimate is 4 × 0.5 + current, so it takes
    // two and denies the third, though nothing it admitted is left in (500, 1500].
    const arrivals = at(0, 0, 0, 0, 1500, 1500, 1500)
    const [run] = runRules(arrivals, rules({ ...global('sliding-window'), limit: 4 }))
    expect(run!.allowed).toEqual([true, true, true, true, true, true, false])
    const spec = { id: 'sw', algorithm: 'sliding-window', limit: 4, periodMs: 1000 }
    const row = accuracyOf(arrivals, { ...spec, byExecution: false, ...run! })
    expect(row).toMatchObject({ allowed: 6, oracleAllowed: 7, overshoot: 0 })
    expect(row.agreement.all).toEqual({ judged: 7, wronglyAllowed: 0, wronglyDenied: 1 })
    expect(row.agreement.bands[1]).toEqual({ judged: 3, wronglyAllowed: 0, wronglyDenied: 1 })
    expect(row.agreement.underAdmission).toBe(2)
    expect(row.agreement.withinLimit).toEqual({ judged: 7, wronglyAllowed: 0, wronglyDenied: 1 })
    expect(accuracyMarkdown([row], [])).toContain('| sw | 14.286% (1 of 7) | 0 | 1 |')
  })
})

describe('charts', () => {
  const rows = perSecond([0, 500, 1500], { allowed: [true, false, true], delayMs: [0, 0, 0] }, 2)
  const chartRun: ChartRun = {
    id: 'demo',
    algorithm: 'fixed-window',
    limit: 1,
    periodMs: 1000,
    shaper: false,
    keyed: false,
    rows,
    stepMs: 500,
    requested: [1, 2, 1, 1, 0],
    admitted: [1, 1, 1, 1, 0],
    executed: [1, 1, 1, 1, 0],
    fullest: { units: 1, t: 0, key: '' },
  }

  it('labels series for people and shows a wait panel only for a shaper', () => {
    const svg = ruleChartSvg(chartRun, 'subtitle')
    for (const label of ['requested', 'admitted', 'denied', 'Units in the last 1 s'])
      expect(svg).toContain(label)
    expect(svg).not.toMatch(/TotalRequests|SuccessRequests|AverageExecuteTime|wait/)
    const shaper = ruleChartSvg({ ...chartRun, shaper: true }, 'subtitle')
    expect(shaper).toContain('Mean wait before execution (ms)')
    expect(shaper).toContain('executed')
  })

  it('marks the fullest window when it is over the limit', () => {
    expect(ruleChartSvg(chartRun, 's')).not.toContain('+1 (100 %)')
    const over = { ...chartRun, fullest: { units: 2, t: 500, key: '' } }
    expect(ruleChartSvg(over, 's')).toContain('2 at 0.5 s: +1 (100 %)')
  })
})

describe('which algorithm fits', () => {
  const row = (id: string, algorithm: string, overshoot: number) =>
    ({
      id,
      algorithm,
      limit: 500,
      overshoot,
      agreement: { underAdmission: 7 },
    }) as unknown as AccuracyRow

  it("quotes this run's rule for each need, and says when the run has none", () => {
    const fits = whichFits([row('mine', 'sliding-window', 9), row('log', 'sliding-log', 0)])
    expect(fits.map(([need, pick]) => `${need} -> ${pick}`)).toContain(
      'close to exact, with O(1) state -> sliding-window (default)'
    )
    const cell = (pick: string) => fits.find((r) => r[1] === pick)![2]
    expect(cell('sliding-window (default)')).toBe(
      'mine: 9 units (1.80%) over the limit at worst; denied with 7 units of room at worst'
    )
    expect(cell('sliding-log')).toMatch(/^log: 0 units \(0\.00%\)/)
    expect(cell('fixed-window')).toMatch(/\(not in this run\)$/)
  })
})
