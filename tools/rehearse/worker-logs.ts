/**
 * @module tools/rehearse/worker-logs
 * The Worker's own request logs as recorded requests: `wrangler tail --format json` (or a Tail
 * Worker's trace items, one a line), with the whole request (URL, method, headers, `cf`) and
 * its response status; and Logpush's `workers_trace_events` (`EventTimestampMs`, `Event`), whose
 * request has only its URL and method, so rules on the client's address, country or headers
 * cannot be judged from it. Events that are no HTTP request (alarms, cron) are passed over. Pure.
 */
import type { Carried, RequestField, TrafficRecord } from './records'
import { unixMs } from './timestamps'

/**
 * A member of an object under any of its spellings: trace items are camelCase (`url`), Logpush
 * capitalises (`Request`, `URL`).
 */
function member(value: unknown, name: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined
  const object = value as Record<string, unknown>
  return (
    object[name] ?? object[name[0]!.toUpperCase() + name.slice(1)] ?? object[name.toUpperCase()]
  )
}

/**
 * Whether a parsed JSON object is a Worker's log entry.
 *
 * @param entry - a parsed JSON object
 */
export function isWorkerLog(entry: Record<string, unknown>): boolean {
  return member(entry, 'event') !== undefined && timeOf(entry) !== undefined
}

function timeOf(entry: Record<string, unknown>): unknown {
  return entry.eventTimestamp ?? entry.EventTimestampMs
}

/** The request and response of an entry (a fetch event), if it is one. */
function exchange(entry: Record<string, unknown>) {
  const event = member(entry, 'event')
  const request = member(event, 'request')
  return request === undefined ? undefined : { request, response: member(event, 'response') }
}

function headersOf(request: unknown): Record<string, string> | undefined {
  const headers = member(request, 'headers')
  if (typeof headers !== 'object' || headers === null) return undefined
  const named: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers))
    if (typeof value === 'string') named[name.toLowerCase()] = value
  return named
}

/**
 * What a Worker's log carries, from its first request entry.
 *
 * @param entry - a parsed entry that is a request
 */
export function workerLogCarries(entry: Record<string, unknown>): Carried {
  const { request, response } = exchange(entry) ?? {}
  const fields = new Set<RequestField>(['method', 'host', 'path', 'query'])
  if (member(response, 'status') !== undefined) fields.add('status')
  const headers = headersOf(request)
  if (headers?.['cf-connecting-ip'] !== undefined) fields.add('ip')
  const cf = member(request, 'cf')
  if (member(cf, 'country') !== undefined) fields.add('country')
  if (member(cf, 'asn') !== undefined) fields.add('asn')
  return { fields, headers: headers === undefined ? new Set() : 'all' }
}

/**
 * A Worker's log entry as a recorded request; `undefined` for an event that is no request.
 *
 * @param entry - the parsed entry
 * @param at - its file and line number
 * @returns the record, or a problem to report at that line
 */
export function workerLogRecord(
  entry: Record<string, unknown>,
  at: { file: string; line: number }
): TrafficRecord | string | undefined {
  const found = exchange(entry)
  if (!found) return undefined
  const atMs = unixMs(timeOf(entry))
  if (atMs === undefined)
    return `the event time ${JSON.stringify(timeOf(entry))} is not a time (Unix ms or RFC 3339)`
  const url = member(found.request, 'url')
  let parsed: URL
  try {
    parsed = new URL(String(url))
  } catch {
    return `the request URL ${JSON.stringify(url)} is not an absolute URL`
  }
  const record: TrafficRecord = {
    atMs,
    ...at,
    host: parsed.host,
    target: parsed.pathname + parsed.search,
  }
  const method = member(found.request, 'method')
  if (typeof method === 'string') record.method = method
  const status = member(found.response, 'status')
  if (typeof status === 'number') record.status = status
  const headers = headersOf(found.request)
  if (headers) {
    record.headers = headers
    if (headers['cf-connecting-ip']) record.ip = headers['cf-connecting-ip']
  }
  const cf = member(found.request, 'cf')
  const country = member(cf, 'country')
  if (typeof country === 'string' && country !== '') record.country = country.toUpperCase()
  const asn = member(cf, 'asn')
  if (typeof asn === 'number') record.asn = asn
  return record
}
