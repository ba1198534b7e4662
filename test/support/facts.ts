/**
 * @module test/support/facts
 * Request facts as literals, for the pure rule modules.
 */
import type { RequestFacts } from '../../src/types'

/**
 * A POST from 203.0.113.7 in NL (AS 64500) with no headers, with `overrides` on top.
 *
 * @param overrides - the facts a test cares about
 */
export function facts(overrides: Partial<RequestFacts> = {}): RequestFacts {
  return {
    method: 'POST',
    host: 'api.example.com',
    path: '/',
    query: new URLSearchParams(),
    headers: new Headers(),
    address: '203.0.113.7',
    ip: '203.0.113.7',
    country: 'NL',
    asn: 64500,
    ...overrides,
  }
}

/** {@link facts} with request headers. */
export const withHeaders = (
  headers: Record<string, string>,
  overrides: Partial<RequestFacts> = {}
) => facts({ ...overrides, headers: new Headers(headers) })
