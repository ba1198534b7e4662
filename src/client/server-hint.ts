/**
 * @module client/server-hint
 * When a server says a request may be tried again: `Retry-After` (RFC 9110 section 10.2.3),
 * else the `t` of the `RateLimit` header. Malformed values are ignored, never thrown.
 */
import { parseList } from './structured-list'

/** Where a wait came from: a header of the response, or the client's own backoff. */
export type HintSource = 'retry-after' | 'ratelimit' | 'backoff'

/** What a response said about when to come back. */
export interface ServerHint {
  /** The header it came from. */
  source: Exclude<HintSource, 'backoff'>
  /** How long from now (ms), at least 0. */
  ms: number
}

const DELTA_SECONDS = /^\d+$/
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)'
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)'
const MONTH = `(?<month>${MONTHS.join('|')})`
const TIME = '(?<hour>\\d{2}):(?<minute>\\d{2}):(?<second>\\d{2})'
/** The three forms of RFC 9110 section 5.6.7, which recipients must all accept. */
const HTTP_DATES = [
  // IMF-fixdate, the form senders must use: `Sun, 06 Nov 1994 08:49:37 GMT`.
  new RegExp(`^${DAY}, (?<day>\\d{2}) ${MONTH} (?<year>\\d{4}) ${TIME} GMT$`),
  // RFC 850, obsolete: `Sunday, 06-Nov-94 08:49:37 GMT`.
  new RegExp(`^${LONG_DAY}, (?<day>\\d{2})-${MONTH}-(?<yy>\\d{2}) ${TIME} GMT$`),
  // asctime, obsolete: `Sun Nov  6 08:49:37 1994`.
  new RegExp(`^${DAY} ${MONTH} (?<day>[ \\d]\\d) ${TIME} (?<year>\\d{4})$`),
]

/**
 * An HTTP-date as Unix ms, in any of the three forms RFC 9110 section 5.6.7 has recipients
 * accept; `undefined` for anything else, including dates that do not exist (`31 Feb`).
 *
 * @param value - the date as sent
 * @param nowMs - the recipient's time, to place an RFC 850 two-digit year
 */
export function parseHttpDate(value: string, nowMs: number): number | undefined {
  const fields = HTTP_DATES.map((pattern) => pattern.exec(value)?.groups).find(Boolean)
  if (!fields) return undefined
  const [year, month, day, hour, minute, second] = [
    fields.year === undefined ? twoDigitYear(Number(fields.yy), nowMs) : Number(fields.year),
    MONTHS.indexOf(fields.month ?? ''),
    Number(fields.day),
    Number(fields.hour),
    Number(fields.minute),
    Number(fields.second),
  ]
  const date = new Date(Date.UTC(year, month, day, hour, minute, second))
  // Date.UTC rolls 31 Feb over into March and reads years below 100 as 19xx; a real date does not.
  const real =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second
  return real ? date.getTime() : undefined
}

/** RFC 9110: a two-digit year more than 50 years in the future is in the past century. */
function twoDigitYear(yy: number, nowMs: number): number {
  const thisYear = new Date(nowMs).getUTCFullYear()
  const year = thisYear - (thisYear % 100) + yy
  if (year > thisYear + 50) return year - 100
  return year <= thisYear - 50 ? year + 100 : year
}

/**
 * A `Retry-After` value as a wait in ms: delta-seconds, or an HTTP-date measured from `nowMs`
 * (a date in the past is 0).
 *
 * @param value - the header, or `null` when absent
 * @param nowMs - the time the date is measured from
 * @returns the wait, or `undefined` when absent or malformed
 */
export function retryAfterMs(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined
  const text = value.trim()
  if (DELTA_SECONDS.test(text)) {
    const seconds = Number(text)
    return Number.isSafeInteger(seconds * 1000) ? seconds * 1000 : undefined
  }
  const date = parseHttpDate(text, nowMs)
  return date === undefined ? undefined : Math.max(0, date - nowMs)
}

/**
 * The wait a `RateLimit` field suggests (`"api";r=0;t=30, "burst";r=5;t=2`): the largest `t`
 * among the policies with no quota left (`r=0`), else the largest `t`. Policies whose `t` is not
 * a non-negative integer are skipped; a field that is not a valid structured-field list gives
 * nothing. Servers of either meaning of `t` are read alike: draft-ietf-httpapi-ratelimit-headers-11
 * (seconds until more quota comes: at `r=0`, when a request may pass) and draft-10 and earlier
 * (seconds until the whole quota is back: at `r=0`, a time a request may pass too, if later than
 * needed).
 *
 * @param value - the header, or `null` when absent
 * @returns the wait in ms, or `undefined`
 */
export function rateLimitResetMs(value: string | null): number | undefined {
  if (value === null) return undefined
  const members = parseList(value)
  if (!members) return undefined
  let exhausted: number | undefined
  let any: number | undefined
  for (const member of members) {
    if ('inner' in member) continue
    const t = member.params.get('t')
    if (t?.type !== 'integer' || t.value < 0) continue
    const r = member.params.get('r')
    any = Math.max(any ?? 0, t.value)
    if (r?.type === 'integer' && r.value === 0) exhausted = Math.max(exhausted ?? 0, t.value)
  }
  const seconds = exhausted ?? any
  return seconds === undefined ? undefined : seconds * 1000
}

/**
 * What a response says about when to retry: `Retry-After` if it is usable, else `RateLimit`.
 * An HTTP-date is measured from the response's own `Date` (the server's clock, so a client
 * whose clock is off still waits the right time), or from `nowMs` when that is missing.
 *
 * @param headers - the response's headers
 * @param nowMs - the client's time
 */
export function serverHint(headers: Headers, nowMs: number): ServerHint | undefined {
  const sent = headers.get('date')
  const baseMs = (sent === null ? undefined : parseHttpDate(sent.trim(), nowMs)) ?? nowMs
  const retryAfter = retryAfterMs(headers.get('retry-after'), baseMs)
  if (retryAfter !== undefined) return { source: 'retry-after', ms: retryAfter }
  const reset = rateLimitResetMs(headers.get('ratelimit'))
  if (reset !== undefined) return { source: 'ratelimit', ms: reset }
  return undefined
}
