import { describe, expect, it } from 'vitest'
import {
  parseHttpDate,
  rateLimitResetMs,
  retryAfterMs,
  serverHint,
} from '../../src/client/server-hint'

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0)

describe('Retry-After', () => {
  it.each([
    ['0', 0],
    ['30', 30_000],
    [' 7 ', 7_000],
    ['Mon, 23 Nov 2026 12:00:05 GMT', 5_000],
    ['Monday, 23-Nov-26 12:01:00 GMT', 60_000],
    ['Mon Nov 23 12:00:10 2026', 10_000],
    ['Sun, 22 Nov 2026 12:00:00 GMT', 0],
  ])('%j waits %i ms', (value, ms) => {
    expect(retryAfterMs(value, NOW)).toBe(ms)
  })

  it.each([
    null,
    '',
    '-1',
    '1.5',
    '+3',
    '3 s',
    '1e3',
    '30, 60',
    '99999999999999999999',
    'Mon, 31 Feb 2026 12:00:05 GMT',
    'Mon, 23 Nov 2026 24:00:00 GMT',
    'Mon, 23 Nov 2026 12:00:05 UTC',
    'mon, 23 nov 2026 12:00:05 gmt',
    '2026-11-23T12:00:05Z',
    'soon',
  ])('ignores %j', (value) => {
    expect(retryAfterMs(value, NOW)).toBeUndefined()
  })

  it('places a two-digit year within 50 years of now', () => {
    expect(new Date(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', NOW)!).toISOString()).toBe(
      '1994-11-06T08:49:37.000Z'
    )
    expect(new Date(parseHttpDate('Friday, 06-Nov-76 08:49:37 GMT', NOW)!).getUTCFullYear()).toBe(
      2076
    )
    expect(new Date(parseHttpDate('Saturday, 06-Nov-77 08:49:37 GMT', NOW)!).getUTCFullYear()).toBe(
      1977
    )
  })
})

describe('RateLimit', () => {
  it.each([
    ['"api";r=0;t=30', 30_000],
    ['"api";r=5;t=30, "burst";r=0;t=2', 2_000],
    ['"a";r=0;t=3, "b";r=0;t=9, "c";r=4;t=60', 9_000],
    ['"a";r=4;t=3, "b";r=1;t=9', 9_000],
    ['"a";r=0;t=-5, "b";r=2;t=7', 7_000],
    ['"a";r=0;t=1.5, "b";r=0;t=4', 4_000],
    ['"a";r=0;t="9", "b";r=1;t=4', 4_000],
    ['("x" "y");t=99, "b";r=0;t=4', 4_000],
    ['"a";t=0', 0],
  ])('%j waits %i ms', (value, ms) => {
    expect(rateLimitResetMs(value)).toBe(ms)
  })

  // draft-10's t was when the whole quota is back; draft-11's is when more comes. At r=0 either
  // is a time a request may pass (draft-10's later than needed), so both read the same way.
  it.each([
    ['draft-11, as this limiter sends it', '"api-per-ip";r=0;t=47;pk=:MjAzLjAuMTEzLjc=:', 47_000],
    ['draft-10, the whole quota back', '"api-per-ip";r=0;t=101', 101_000],
    ['draft-11, one policy spent among others', '"day";r=40;t=3, "min";r=0;t=12;pk=:YQ==:', 12_000],
  ])('reads %s', (_server, value, ms) => {
    expect(rateLimitResetMs(value)).toBe(ms)
  })

  it.each([null, '', '"api";r=0', '"api";r=0;t=30,', 'api;r=0;t=3 junk', '"a";r=0;t=3;T=1'])(
    'gives nothing for %j',
    (value) => {
      expect(rateLimitResetMs(value)).toBeUndefined()
    }
  )
})

describe('the hint of a response', () => {
  it('prefers Retry-After, then RateLimit, and ignores a malformed Retry-After', () => {
    const both = new Headers({ 'retry-after': '3', ratelimit: '"a";r=0;t=30' })
    expect(serverHint(both, NOW)).toEqual({ source: 'retry-after', ms: 3_000 })
    const bad = new Headers({ 'retry-after': 'later', ratelimit: '"a";r=0;t=30' })
    expect(serverHint(bad, NOW)).toEqual({ source: 'ratelimit', ms: 30_000 })
    expect(serverHint(new Headers(), NOW)).toBeUndefined()
  })

  it("measures a Retry-After date from the response's own Date, so a skewed clock waits right", () => {
    const headers = new Headers({
      date: 'Mon, 23 Nov 2026 11:00:00 GMT',
      'retry-after': 'Mon, 23 Nov 2026 11:00:20 GMT',
    })
    expect(serverHint(headers, NOW)).toEqual({ source: 'retry-after', ms: 20_000 })
    headers.set('date', 'garbage')
    expect(serverHint(headers, NOW)).toEqual({ source: 'retry-after', ms: 0 })
  })
})
