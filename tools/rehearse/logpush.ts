/**
 * @module tools/rehearse/logpush
 * Cloudflare Logpush `http_requests` lines (NDJSON, one request a line) as recorded requests:
 * `EdgeStartTimestamp` (RFC 3339, Unix seconds or Unix nanoseconds), `ClientRequestMethod`,
 * `ClientRequestHost`, `ClientRequestURI` (path and query) or `ClientRequestPath`, `ClientIP`,
 * `ClientCountry`, `ClientASN`, `EdgeResponseStatus` and the headers the job logs as custom fields
 * (`RequestHeaders`). Lines of the Worker's own subrequests (`WorkerSubrequest`) are passed over:
 * they are not clients' requests. Pure.
 */
import type { Carried, RequestField, TrafficRecord } from './records'
import { unixMs } from './timestamps'

/** The Logpush field each request field is read from, in order of preference. */
const SOURCES: [RequestField, string][] = [
  ['method', 'ClientRequestMethod'],
  ['host', 'ClientRequestHost'],
  ['path', 'ClientRequestURI'],
  ['query', 'ClientRequestURI'],
  ['path', 'ClientRequestPath'],
  ['ip', 'ClientIP'],
  ['country', 'ClientCountry'],
  ['asn', 'ClientASN'],
  ['status', 'EdgeResponseStatus'],
]

/**
 * Whether a parsed JSON line is a Logpush `http_requests` line.
 *
 * @param line - a parsed JSON object
 */
export function isLogpush(line: Record<string, unknown>): boolean {
  return 'EdgeStartTimestamp' in line || SOURCES.some(([, name]) => name in line)
}

/**
 * What Logpush lines carry, from the fields of one of them (a job writes the same fields on
 * every line).
 *
 * @param line - a parsed line
 */
export function logpushCarries(line: Record<string, unknown>): Carried {
  const fields = new Set(SOURCES.filter(([, name]) => name in line).map(([field]) => field))
  return { fields, headers: 'RequestHeaders' in line ? 'logged' : new Set() }
}

/**
 * A Logpush line as a recorded request, or `undefined` for a Worker's subrequest.
 *
 * @param line - the parsed line
 * @param at - its file and line number
 * @returns the record, or a problem to report at that line
 */
export function logpushRecord(
  line: Record<string, unknown>,
  at: { file: string; line: number }
): TrafficRecord | string | undefined {
  if (line.WorkerSubrequest === true) return undefined
  if (!('EdgeStartTimestamp' in line))
    return 'no EdgeStartTimestamp: add the field to the Logpush job (see docs/rehearse.md)'
  const atMs = unixMs(line.EdgeStartTimestamp)
  if (atMs === undefined)
    return `EdgeStartTimestamp ${JSON.stringify(line.EdgeStartTimestamp)} is not a time (RFC 3339, Unix seconds or Unix nanoseconds)`
  const record: TrafficRecord = { atMs, ...at }
  const text = (name: string) => {
    const value = line[name]
    return typeof value === 'string' && value !== '' ? value : undefined
  }
  const method = text('ClientRequestMethod')
  if (method) record.method = method
  const host = text('ClientRequestHost')
  if (host) record.host = host
  const target = text('ClientRequestURI') ?? text('ClientRequestPath')
  if (target) record.target = target
  const ip = text('ClientIP')
  if (ip) record.ip = ip
  // Logpush writes lower-case codes; the Worker's request.cf has them upper-case.
  const country = text('ClientCountry')
  if (country) record.country = country.toUpperCase()
  const asn = line.ClientASN
  if (typeof asn === 'number' && asn > 0) record.asn = asn
  const status = line.EdgeResponseStatus
  if (typeof status === 'number' && status > 0) record.status = status
  const headers = line.RequestHeaders
  if (typeof headers === 'object' && headers !== null) record.headers = loggedHeaders(headers)
  return record
}

/**
 * The logged headers by lower-case name, strings only: the parsed object itself when it already
 * is so (custom fields are named in lower case), as nearly every line's is.
 */
function loggedHeaders(headers: object): Record<string, string> {
  const given = headers as Record<string, unknown>
  let plain = true
  for (const name in given) plain &&= typeof given[name] === 'string' && !UPPER.test(name)
  if (plain) return given as Record<string, string>
  const logged: Record<string, string> = {}
  for (const [name, value] of Object.entries(given))
    if (typeof value === 'string') logged[name.toLowerCase()] = value
  return logged
}

const UPPER = /[A-Z]/
