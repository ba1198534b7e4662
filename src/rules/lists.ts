/**
 * @module rules/lists
 * Allow and deny lists: clients that skip limiting, and clients that are refused outright.
 */
import ipaddr from 'ipaddr.js'
import * as v from 'valibot'
import type { RequestFacts } from '../types'
import type { List, Lists } from './document'
import {
  headerName,
  named,
  objectMessage,
  show,
  text,
  wholeNumber,
  type Issue,
} from './schema-parts'

/** An address or a CIDR range, checked with the same parser requests go through. */
const cidr = v.pipe(
  text('an IP address or CIDR range'),
  v.check(
    (value) => parseRange(value) !== undefined,
    (i: Issue) => `${show(i.input)} is not an IP address or CIDR range`
  )
)

const country = v.pipe(
  text('a country code'),
  // Two letters or digits: Cloudflare also reports T1 (Tor) and XX (unknown).
  v.regex(/^[A-Za-z0-9]{2}$/, (i: Issue) => `${show(i.input)} is not a two-character country code`),
  v.transform((code) => code.toUpperCase())
)

const list = (what: string) =>
  v.strictObject(
    {
      ips: v.optional(v.array(cidr, (i: Issue) => `expected a list, got ${show(i.input)}`)),
      countries: v.optional(
        v.array(country, (i: Issue) => `expected a list, got ${show(i.input)}`)
      ),
      asns: v.optional(
        v.array(wholeNumber(4_294_967_295), (i: Issue) => `expected a list, got ${show(i.input)}`)
      ),
      headers: v.optional(
        v.record(
          headerName,
          v.array(text('a header value'), (i: Issue) => `expected a list, got ${show(i.input)}`),
          (i: Issue) => `expected an object of header names to values, got ${show(i.input)}`
        )
      ),
    },
    objectMessage(what)
  )

/** `lists` as written: `{ allow?, deny? }`, each with `ips`, `countries`, `asns`, `headers`. */
export const ListsSchema = named<Lists, Lists>()(
  v.strictObject(
    { allow: v.optional(list('an allow list')), deny: v.optional(list('a deny list')) },
    objectMessage('an object with "allow" and "deny"')
  )
)

/** A compiled list: returns what matched (for logs), or `undefined`. */
export type ListMatcher = (facts: RequestFacts) => string | undefined

/**
 * Compiles one list. Client addresses are matched as the request presents them
 * (`CF-Connecting-IP`, IPv4-mapped IPv6 as IPv4), before /64 grouping.
 *
 * @param input - the validated list
 */
export function compileList(input: List | undefined): ListMatcher | undefined {
  if (!input) return undefined
  const ranges = (input.ips ?? []).map((value) => ({ value, range: parseRange(value)! }))
  const countries = new Set(input.countries ?? [])
  const asns = new Set(input.asns ?? [])
  const headers = Object.entries(input.headers ?? {}).map(([name, values]) => ({
    name,
    values: new Set(values),
  }))
  return (facts) => {
    if (facts.address !== undefined && ranges.length > 0) {
      const address = ipaddr.parse(facts.address)
      for (const { value, range } of ranges) {
        if (address.kind() === range[0].kind() && address.match(range)) return `ip ${value}`
      }
    }
    if (facts.country !== undefined && countries.has(facts.country))
      return `country ${facts.country}`
    if (facts.asn !== undefined && asns.has(facts.asn)) return `asn ${facts.asn}`
    for (const { name, values } of headers) {
      const value = facts.headers.get(name)
      if (value !== null && values.has(value)) return `header ${name}`
    }
    return undefined
  }
}

function parseRange(value: string): [ipaddr.IPv4 | ipaddr.IPv6, number] | undefined {
  try {
    const [address, bits] = value.includes('/')
      ? ipaddr.parseCIDR(value)
      : (() => {
          const parsed = ipaddr.parse(value)
          return [parsed, parsed.kind() === 'ipv4' ? 32 : 128] as const
        })()
    // Requests present IPv4-mapped addresses as IPv4, so a mapped range is matched as IPv4.
    if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96)
      return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96]
    return [address, bits]
  } catch {
    return undefined
  }
}
