/**
 * @module tools/rehearse/timestamps
 * Request times as logs write them: RFC 3339 (any fraction of a second, `Z` or an offset), or a
 * Unix time in seconds, milliseconds, microseconds or nanoseconds, as a number or a string of
 * digits (Logpush's `timestamps` option gives `rfc3339`, `unix` or `unixnano`). Pure.
 */

const RFC_3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/
const DIGITS = /^\d+(?:\.\d+)?$/

/**
 * Unix ms (a whole number) of a logged time, or `undefined` if it is none of the forms. A Unix
 * number's unit is told by its size: below 10¹¹ seconds (until the year 5138), below 10¹⁴
 * milliseconds, below 10¹⁷ microseconds, else nanoseconds. Nanoseconds beyond 2⁵³ lose their
 * last digits in a JSON number, well below a millisecond.
 *
 * @param value - the field as read (a JSON number or string, or a CSV cell)
 * @example unixMs('2025-01-01T00:00:00.250Z') // 1735689600250
 * @example unixMs(1735689600250000000) // 1735689600250
 */
export function unixMs(value: unknown): number | undefined {
  if (typeof value === 'number') return fromNumber(value)
  if (typeof value !== 'string') return undefined
  const text = value.trim()
  if (DIGITS.test(text)) return fromNumber(Number(text))
  const parts = RFC_3339.exec(text)
  if (!parts) return undefined
  const [year, month, day, hour, minute, second] = parts.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
    return undefined
  const fractionMs = parts[7] === undefined ? 0 : Number(parts[7].padEnd(3, '0').slice(0, 3))
  const offsetMin =
    parts[8] === undefined ? (parts[9] === '-' ? -1 : 1) * (+parts[10]! * 60 + +parts[11]!) : 0
  const ms = Date.UTC(year, month - 1, day, hour, minute, second) + fractionMs
  return ms - offsetMin * 60_000
}

function fromNumber(value: number): number | undefined {
  if (!Number.isFinite(value) || value < 0) return undefined
  const ms = value < 1e11 ? value * 1e3 : value < 1e14 ? value : value / (value < 1e17 ? 1e3 : 1e6)
  // A thousandth of a millisecond of slack: 1735689600.123 s is 1735689600122.9998 ms in binary.
  return Math.floor(ms + 1e-3)
}
