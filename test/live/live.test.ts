import { describe, expect, it } from 'vitest'
import { LiveStore, LiveTally, SpaceSaving, type MinuteBatch } from '../../src/live'

const MIN = 60_000
const T0 = 1_700_000_040_000 // a minute's start

describe('SpaceSaving', () => {
  it.each([
    {
      name: 'counts exactly while there are free slots',
      slots: 3,
      stream: ['a', 'b', 'a', 'c', 'a', 'b'],
      top: [
        ['a', 3],
        ['b', 2],
        ['c', 1],
      ],
    },
    {
      name: 'gives a newcomer the least counted slot and its count',
      slots: 2,
      stream: ['a', 'a', 'a', 'b', 'c'],
      top: [
        ['a', 3],
        ['c', 2],
      ],
    },
    {
      name: 'keeps an item seen more than total / slots times',
      slots: 2,
      stream: ['x', 'h', 'y', 'h', 'z', 'h', 'w', 'h'],
      top: [['h', 4]],
    },
  ])('$name', ({ slots, stream, top }) => {
    const sketch = new SpaceSaving<number>(slots)
    stream.forEach((id, i) => sketch.add(id, i))
    const got = sketch.top().map(({ id, count }) => [id, count])
    expect(got.slice(0, top.length)).toEqual(top)
    expect(sketch.size).toBeLessThanOrEqual(slots)
  })

  it('keeps a key limited in more than 1 % of the minute’s refusals through a flood of fresh keys', () => {
    // An attacker limited under a new key each time cannot push a real heavy hitter out.
    const sketch = new SpaceSaving<number>(100)
    for (let i = 0; i < 10_000; i++) sketch.add(i % 50 === 0 ? 'heavy' : `fresh-${i}`, i)
    const heavy = sketch.top().find(({ id }) => id === 'heavy')
    // Its count is an upper bound: at least its true 200 refusals.
    expect(heavy?.count).toBeGreaterThanOrEqual(200)
  })

  it('keeps the latest value', () => {
    const sketch = new SpaceSaving<string>(2)
    sketch.add('k', 'first')
    sketch.add('k', 'latest')
    expect(sketch.top()).toEqual([{ id: 'k', count: 2, value: 'latest' }])
  })
})

describe('LiveTally', () => {
  it('counts per rule and minute, and hands everything over once', () => {
    const tally = new LiveTally()
    tally.count('r', 'allowed', T0 + 1)
    tally.count('r', 'limited', T0 + 2)
    tally.limited('r', 'r|1.2.3.4', false, T0 + 5000, T0 + 2)
    tally.count('r', 'shadowLimited', T0 + MIN)
    expect(tally.pending).toBe(true)
    expect(tally.take()).toEqual([
      {
        minute: T0,
        rules: { r: { allowed: 1, limited: 1, shadowLimited: 0, degraded: 0 } },
        limited: [{ rule: 'r', key: 'r|1.2.3.4', count: 1, retryAtMs: T0 + 5000, hide: false }],
      },
      {
        minute: T0 + MIN,
        rules: { r: { allowed: 0, limited: 0, shadowLimited: 1, degraded: 0 } },
        limited: [],
      },
    ])
    expect(tally.pending).toBe(false)
    expect(tally.take()).toEqual([])
  })

  it('drops minutes older than an hour that were never taken', () => {
    const tally = new LiveTally()
    tally.count('r', 'allowed', T0)
    tally.count('r', 'allowed', T0 + 60 * MIN)
    expect(tally.take().map(({ minute }) => minute)).toEqual([T0 + 60 * MIN])
  })
})

const counts = (allowed: number, limited = 0, shadowLimited = 0, degraded = 0) => ({
  degraded,
  allowed,
  limited,
  shadowLimited,
})

describe('LiveStore', () => {
  const batch = (minute: number, allowed: number, limited: MinuteBatch['limited'] = []) => ({
    minute,
    rules: {
      r: counts(
        allowed,
        limited.reduce((n, k) => n + k.count, 0)
      ),
    },
    limited,
  })

  it('sums isolates per minute and shows 60 minutes, oldest first, the current one last', () => {
    const store = new LiveStore()
    store.add([batch(T0, 2)], T0)
    store.add([batch(T0, 3), batch(T0 + MIN, 1)], T0 + MIN)
    const view = store.view(T0 + MIN + 5)
    const series = view.rules.r!
    expect(series.minutes).toHaveLength(60)
    expect(series.minutes.at(-1)).toEqual({ minute: T0 + MIN, ...counts(1) })
    expect(series.minutes.at(-2)).toEqual({ minute: T0, ...counts(5) })
    expect(series.minutes[0]!.minute).toBe(T0 - 58 * MIN)
    expect([series.allowed, series.limited, series.shadowLimited]).toEqual([6, 0, 0])
  })

  it('forgets minutes an hour old, and says which to delete', () => {
    const store = new LiveStore()
    store.add([batch(T0, 2)], T0)
    const changes = store.add([batch(T0 + 60 * MIN, 1)], T0 + 60 * MIN)
    expect(changes.deleted).toEqual([T0])
    expect(changes.put.map(({ minute }) => minute)).toEqual([T0 + 60 * MIN])
    expect(store.view(T0 + 60 * MIN).rules.r!.allowed).toBe(1)
    // Too old or from a clock far ahead: ignored.
    expect(store.add([batch(T0, 9), batch(T0 + 62 * MIN, 9)], T0 + 60 * MIN).put).toEqual([])
  })

  it('lists the most limited keys over the hour, largest count first, with the time left to retry', () => {
    const store = new LiveStore()
    const key = (k: string, count: number, retryAtMs: number) => ({
      rule: 'r',
      key: k,
      count,
      retryAtMs,
    })
    store.add([batch(T0, 0, [key('a', 3, T0 + 1000), key('b', 5, T0 + 2000)])], T0)
    store.add([batch(T0 + MIN, 0, [key('a', 4, T0 + MIN + 9000)])], T0 + MIN)
    expect(store.view(T0 + MIN).topLimited).toEqual([
      { rule: 'r', key: 'a', count: 7, retryAfterMs: 9000 },
      { rule: 'r', key: 'b', count: 5, retryAfterMs: 0 },
    ])
  })

  it('keeps at most 100 keys per minute when merging', () => {
    const store = new LiveStore()
    const many = (from: number) =>
      Array.from({ length: 100 }, (_, i) => ({
        rule: 'r',
        key: `k${from + i}`,
        count: 1,
        retryAtMs: T0,
      }))
    store.add([batch(T0, 0, many(0))], T0)
    const { put } = store.add([batch(T0, 0, many(100))], T0)
    expect(put[0]!.limited).toHaveLength(100)
  })
})
