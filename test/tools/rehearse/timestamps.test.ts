import { describe, expect, it } from 'vitest'
import { unixMs } from '../../../tools/rehearse/timestamps'

const AT = Date.UTC(2026, 10, 2, 9, 0, 0)

describe('request times as logs write them', () => {
  it.each([
    ['RFC 3339, Z', '2026-11-02T09:00:00Z', AT],
    ['RFC 3339 with ms', '2026-11-02T09:00:00.123Z', AT + 123],
    ['RFC 3339 with ns, cut to ms', '2026-11-02T09:00:00.123456789Z', AT + 123],
    ['RFC 3339 with an offset', '2026-11-02T10:30:00+01:30', AT],
    ['RFC 3339, space and lower-case z', '2026-11-02 09:00:00z', AT],
    ['Unix seconds', 1793610000, AT],
    ['Unix seconds with a fraction', 1793610000.123, AT + 123],
    ['Unix seconds as text', '1793610000', AT],
    ['Unix ms', 1793610000123, AT + 123],
    ['Unix µs', 1793610000123456, AT + 123],
    ['Unix ns (a JSON number past 2^53)', JSON.parse('1793610000123456789') as number, AT + 123],
    ['Unix ns as text', '1793610000123456789', AT + 123],
  ])('%s', (_, value, expected) => {
    expect(unixMs(value)).toBe(expected)
  })

  it.each([
    ['yesterday'],
    ['2026-13-02T09:00:00Z'],
    ['2026-11-02T09:00:00'],
    [-1],
    [null],
    [{}],
    [''],
  ])('refuses %j', (value) => {
    expect(unixMs(value)).toBeUndefined()
  })
})
