import { describe, expect, it } from 'vitest'
import { parseRules } from '../../src/rules'
import { accuracyOf, oracleAdmits, worstOvershoot } from '../../tools/simulate/accuracy'
import {
  generateProfile,
  isIdle,
  mulberry32,
  SEED_PROFILE,
  type Arrival,
} from '../../tools/simulate/profile'
import { accuracyMarkdown, sameDecisionNotes } from '../../tools/simulate/report'
import { compileEach, defaultRules, isShaper, runRules } from '../../tools/simulate/run'
import { CSV_HEADER, perSecond, secondsSpanned, toCsv } from '../../tools/simulate/stats'
import { parseTrace, TraceError } from '../../tools/simulate/trace'

const profile = generateProfile({ ...SEED_PROFILE, seed: 4 })

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

describe('the seed 004 profile', () => {
  const counts = perSecondCounts(profile)
  const idle = counts.map((_, s) => isIdle(s * 1000, SEED_PROFILE))
  const burst = counts.map((_, s) => s % 17 < 2)

  it('is silent for 3 s every 21 s (the seed code; its prose says 20), bursts included', () => {
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
    const only = generateProfile({ ...SEED_PROFILE, seed: 4, senders: 0, idleForMs: 0 })
    expect(only.filter((a) => a.t >= 17_000 && a.t < 19_000)).toHaveLength(1000)
    expect(only.filter((a) => a.t >= 2_000 && a.t < 17_000)).toHaveLength(0)
  })

  it('is sorted, global, of cost 1, and the same for the same seed', () => {
    expect(profile.every((a, i) => i === 0 || profile[i - 1]!.t <= a.t)).toBe(true)
    expect(new Set(profile.map((a) => `${a.key}/${a.cost}`))).toEqual(new Set(['global/1']))
    expect(generateProfile({ ...SEED_PROFILE, seed: 4 })).toEqual(profile)
    expect(generateProfile({ ...SEED_PROFILE, seed: 5 })).not.toEqual(profile)
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
    expect(row).toMatchObject({ allowed: 1000, oracleAllowed: 500, wronglyAllowed: 500 })
    expect(row.overshoot).toBe(500)
    const oracle = oracleAdmits(arrivals, undefined, 500, 1000)
    const admitted = arrivals.filter((_, i) => oracle[i])
    expect(worstOvershoot(admitted, 500, 1000)).toBe(0)
    expect(accuracyMarkdown([row], [])).toContain('| fixed-window | fixed-window | 1000 |')
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
  })
})
