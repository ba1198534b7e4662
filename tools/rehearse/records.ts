/**
 * @module tools/rehearse/records
 * A recorded request as the rehearsal reads it from any traffic format, and what a format
 * carries: the facts the Worker's rules read, no more. Types only.
 */

/** A request field rules can read, as a traffic format may carry it or not. */
export type RequestField =
  'method' | 'host' | 'path' | 'query' | 'ip' | 'country' | 'asn' | 'status'

/** One recorded request. Absent fields are ones the record does not carry. */
export interface TrafficRecord {
  /** When the request arrived (Unix ms): the rehearsal's virtual time. */
  atMs: number
  /** The method as sent. */
  method?: string
  /** The host as sent (a port is ignored). */
  host?: string
  /** The path, with its query when the log has it (`/search?q=a`). */
  target?: string
  /** The client's address (what `CF-Connecting-IP` holds). */
  ip?: string
  /** ISO country code, upper-case (as `request.cf.country`). */
  country?: string
  asn?: number
  /** The response status the log recorded. */
  status?: number
  /** Request headers the log carries, names lower-case. */
  headers?: Record<string, string>
  /** The file it was read from, and its 1-based line: where a problem is reported. */
  file: string
  line: number
}

/**
 * What a traffic source carries for every request. Headers: `all` (a Worker's own logs hold the
 * whole request), `logged` (Logpush's `RequestHeaders`: the custom fields its job names, each on
 * the requests that sent it; a name no request carries is taken as not logged), or the names of
 * a CSV's `header:<name>` columns.
 */
export interface Carried {
  fields: ReadonlySet<RequestField>
  headers: 'all' | 'logged' | ReadonlySet<string>
}
