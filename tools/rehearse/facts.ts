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
    const headers = new Headers(record.headers)
    if (record.ip !== undefined) headers.set('cf-connecting-ip', record.ip)
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
