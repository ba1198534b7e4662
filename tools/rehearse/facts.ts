/**
 * @module tools/rehearse/facts
 * A recorded request's facts, made by the Worker's own code: the record becomes the `Request`
 * the Worker would have received (its URL, method and headers, the client's address as
 * `CF-Connecting-IP`), `requestFacts` reads it as the Worker does (path normalisation, IPv6 by
 * /64, method overrides), and the country and ASN are told as `POST /explain` tells them.
 */
import { BadRequestError } from '../../src/errors'
import { requestFacts } from '../../src/http/request/facts'
import type { MethodOverrideMode } from '../../src/http/shared/settings'
import type { RequestFacts } from '../../src/types'
import type { TrafficRecord } from './records'

/** An HTTP method: a token (RFC 9110). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** The host of requests whose log has none (no rule that reads the host is judged then). */
const NO_HOST = 'host.invalid'

/** A record's facts, the 400 the Worker answers it with, or why it cannot be replayed. */
export type RecordFacts =
  { facts: RequestFacts } | { badRequest: BadRequestError } | { problem: string }

/**
 * The facts of a recorded request.
 *
 * @param record - the request as logged
 * @param methodOverride - the Worker's `METHOD_OVERRIDE` setting
 */
export function recordFacts(
  record: TrafficRecord,
  methodOverride: MethodOverrideMode
): RecordFacts {
  let request: Request
  try {
    const logged =
      record.ip === undefined
        ? record.headers
        : { ...record.headers, 'cf-connecting-ip': record.ip }
    const headers = new LoggedHeaders(logged ?? {}) as unknown as Headers
    const url = urlOf(record)
    const method = record.method ?? 'GET'
    if (!TOKEN.test(method)) throw new TypeError(`${JSON.stringify(method)} is not a method`)
    // What `requestFacts` reads of a Request, without the rest a Request builds (an abort
    // signal, a body): a third of a replayed request's time in Node.
    request = { url, method, headers } as Request
  } catch (error) {
    return { problem: `the request cannot be replayed: ${(error as Error).message}` }
  }
  let facts: RequestFacts
  try {
    facts = requestFacts(request, methodOverride)
  } catch (error) {
    if (error instanceof BadRequestError) return { badRequest: error }
    // `new URL` refusing what the log holds (the Worker would never have received it).
    if (error instanceof TypeError)
      return { problem: `the request cannot be replayed: ${error.message}` }
    throw error
  }
  if (record.country !== undefined) facts.country = record.country
  if (record.asn !== undefined) facts.asn = record.asn
  return { facts }
}

function urlOf(record: TrafficRecord): string {
  const target = record.target ?? '/'
  // An absolute-form target (a proxy request) names its own host.
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return target
  return `https://${record.host ?? NO_HOST}${target.startsWith('/') ? '' : '/'}${target}`
}

/**
 * A logged request's headers, as the Worker's code reads a request's: `get` and `has` by a name in
 * any case, and `forEach` in name order (as the Fetch standard iterates them). Building a
 * `Headers` for each of a million requests cost Node about 2 µs a request; a log holds one value
 * per name, so nothing is combined.
 */
class LoggedHeaders {
  readonly #values: Record<string, string>

  /** @param values - by lower-case name */
  constructor(values: Record<string, string>) {
    this.#values = values
  }

  get(name: string): string | null {
    return this.#values[name.toLowerCase()] ?? null
  }

  has(name: string): boolean {
    return name.toLowerCase() in this.#values
  }

  forEach(callback: (value: string, name: string, parent: LoggedHeaders) => void): void {
    for (const name of Object.keys(this.#values).sort()) callback(this.#values[name]!, name, this)
  }
}
