/**
 * @module http/request/facts
 * Turns a `Request` into the plain facts rules look at.
 */
import ipaddr from 'ipaddr.js'
import { BadRequestError } from '../../errors'
import { foldHeaderName, METHODS, normalizeHost } from '../../rules'
import type { RequestFacts } from '../../types'
import { normalPathOf, urlOf } from './url'
import type { MethodOverrideMode } from '../shared/settings'
import { logEvent } from '../../log'

/**
 * Headers through which frameworks let a client name another method than the request's own
 * (Express's method-override, Symfony, Laravel, ASP.NET, Google APIs, …).
 */
export const METHOD_OVERRIDE_HEADERS = [
  'x-http-method-override',
  'x-http-method',
  'x-method-override',
] as const

/** The query parameter Symfony and Laravel read for the same purpose (on POST). */
export const METHOD_OVERRIDE_PARAM = '_method'

const KNOWN_METHODS: ReadonlySet<string> = new Set(METHODS)

type OverrideHeader = (typeof METHOD_OVERRIDE_HEADERS)[number]
const OVERRIDE_LENGTHS: ReadonlySet<number> = new Set(METHOD_OVERRIDE_HEADERS.map((n) => n.length))

/**
 * Whether a query string may hold the `_method` parameter: only one that spells "method",
 * plainly or percent-encoded, can. Others need not be parsed to know.
 */
export const MAY_NAME_METHOD = /method|%/i

/**
 * The `ip` key value shared by every request whose `CF-Connecting-IP` is absent or not an
 * address (not a possible address, so it collides with no client).
 */
export const UNKNOWN_CLIENT = 'unknown'

let warned = false

/**
 * The facts of a request. The client address comes from `CF-Connecting-IP` only: Cloudflare
 * sets it, while `X-Forwarded-For` and `True-Client-IP` can be written by the client. A request
 * without a usable address (the library behind a proxy that does not set the header, or a
 * client that writes it there) is limited as the one shared client {@link UNKNOWN_CLIENT}:
 * leaving `ip` rules out would let anyone skip them by sending a junk value.
 *
 * @param request - the incoming request
 * @param methodOverride - `count`: a method named by an override header or `_method` counts
 *   too (`facts.methodOverride`); `strip`: they are ignored (the origin never sees them)
 * @throws {BadRequestError} when, counting overrides, the request names two different methods
 */
export function requestFacts(
  request: Request,
  methodOverride: MethodOverrideMode = 'count'
): RequestFacts {
  const url = urlOf(request)
  const facts = new IncomingFacts(request, url)
  if (methodOverride === 'count') {
    const named = overriddenMethod(request.headers, url)
    if (named !== undefined) facts.methodOverride = named
  }
  const header = request.headers.get('cf-connecting-ip')
  const address = addressesOf(header)
  if (address) {
    facts.address = address.address
    facts.ip = address.ip
  } else {
    facts.ip = UNKNOWN_CLIENT
    if (!warned) {
      warned = true
      logEvent('warn', 'client-address-unknown', {
        header: header === null ? 'absent' : 'invalid',
        ip: UNKNOWN_CLIENT,
      })
    }
  }
  return facts
}

/**
 * The facts of an incoming request. `country` and `asn` are read from `request.cf` only when a
 * rule asks: the runtime parses the whole `cf` object on first access, a large share of a
 * request's own CPU for rules that never look at it.
 */
class IncomingFacts implements RequestFacts {
  readonly method: string
  readonly host: string
  readonly path: string
  declare methodOverride?: string
  declare address?: string
  declare ip?: string
  declare claims?: Record<string, unknown>
  readonly #request: Request
  readonly #url: URL
  #cf: { country?: unknown; asn?: unknown } | undefined | null = null
  /** Set by `POST /explain`, which describes a request rather than receiving one. */
  #told: { country?: string | undefined; asn?: number | undefined } = {}

  constructor(request: Request, url: URL) {
    this.method = request.method.toUpperCase()
    this.host = normalizeHost(url.hostname)
    this.path = normalPathOf(request)
    this.#request = request
    this.#url = url
  }

  // Read when a rule looks at them: most requests need neither the parsed query nor a handle
  // on the headers beyond the few read below.
  get query(): URLSearchParams {
    return this.#url.searchParams
  }

  get headers(): Headers {
    return this.#request.headers
  }

  get country(): string | undefined {
    if ('country' in this.#told) return this.#told.country
    const country = this.#readCf()?.country
    return typeof country === 'string' && country !== '' ? country : undefined
  }

  set country(country: string | undefined) {
    this.#told.country = country
  }

  get asn(): number | undefined {
    if ('asn' in this.#told) return this.#told.asn
    const asn = this.#readCf()?.asn
    return typeof asn === 'number' ? asn : undefined
  }

  set asn(asn: number | undefined) {
    this.#told.asn = asn
  }

  #readCf(): { country?: unknown; asn?: unknown } | undefined {
    if (this.#cf === null) this.#cf = this.#request.cf as { country?: unknown; asn?: unknown }
    return this.#cf
  }
}

/**
 * The one method the request's override headers and `_method` parameters name, if any. Values
 * that are no HTTP method a rule can name are ignored (the request is then counted under its
 * own method); two different methods are refused, since origins disagree on which one wins.
 */
function overriddenMethod(headers: Headers, url: URL): string | undefined {
  // Under every spelling an origin could read them by (`X_HTTP_Method_Override` in PHP), in the
  // order of METHOD_OVERRIDE_HEADERS. A spelling folds to its name character by character, so
  // only a name of the same length can be one: one pass over the names, without the spelling
  // index (a request rarely carries any).
  const found: string[][] = []
  headers.forEach((value, name) => {
    if (!OVERRIDE_LENGTHS.has(name.length)) return
    const at = METHOD_OVERRIDE_HEADERS.indexOf(foldHeaderName(name) as OverrideHeader)
    if (at >= 0) (found[at] ??= []).push(...value.split(','))
  })
  const values = found.length === 0 ? [] : found.flat()
  const query = MAY_NAME_METHOD.test(url.search) ? url.searchParams : undefined
  if (query?.has(METHOD_OVERRIDE_PARAM)) values.push(...query.getAll(METHOD_OVERRIDE_PARAM))
  let named: string | undefined
  for (const value of values) {
    const method = value.trim().toUpperCase()
    if (!KNOWN_METHODS.has(method) || method === named) continue
    if (named !== undefined) {
      throw new BadRequestError(
        'method-override',
        `The request names two methods to override with (${named}, ${method}).`
      )
    }
    named = method
  }
  return named
}

/**
 * The address a client is limited by: an IPv4 address as it is, an IPv4-mapped IPv6 address
 * as its IPv4, and any other IPv6 address as its /64 network, because one subscriber usually
 * holds a whole /64 and could otherwise rotate through 2^64 addresses.
 *
 * @param value - the `CF-Connecting-IP` header
 * @returns e.g. `"203.0.113.7"` or `"2001:db8:1:2::/64"`, or `undefined` if absent or invalid
 */
export function clientAddress(value: string | null): string | undefined {
  return addressesOf(value)?.ip
}

/**
 * Whether a text is a dotted quad in canonical form (four parts, no leading zeros, each at most
 * 255): a scan, cheaper than the equivalent regular expression on every request.
 */
function isDottedQuad(text: string): boolean {
  let parts = 0
  let value = 0
  let digits = 0
  for (let i = 0; i <= text.length; i++) {
    // The end closes the last part as a dot would.
    const code = i < text.length ? text.charCodeAt(i) : DOT
    if (code === DOT) {
      if (digits === 0 || value > 255 || ++parts > 4) return false
      value = 0
      digits = 0
    } else if (code < ZERO || code > ZERO + 9 || (digits > 0 && value === 0) || ++digits > 3) {
      return false
    } else value = value * 10 + (code - ZERO)
  }
  return parts === 4
}

const DOT = 46
const ZERO = 48

/** The header's address as lists match it and as it is limited; `undefined` if unusable. */
function addressesOf(value: string | null): { address: string; ip: string } | undefined {
  if (value === null) return undefined
  const text = value.trim()
  // Most clients: a canonical IPv4 address is already its own canonical form, no parse needed.
  if (isDottedQuad(text)) return { address: text, ip: text }
  const address = parseAddress(text)
  return address && { address: address.toString(), ip: limitedAddress(address) }
}

/** The address, IPv4-mapped IPv6 as IPv4; `undefined` if invalid. */
function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  // Only the canonical forms: ipaddr.isValid() would also take inet_aton spellings like "1.2.3".
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text)
  if (!ipaddr.IPv6.isValid(text)) return undefined
  const v6 = ipaddr.IPv6.parse(text)
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6
}

function limitedAddress(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  if (address.kind() === 'ipv4') return address.toString()
  const network = new ipaddr.IPv6([...(address as ipaddr.IPv6).parts.slice(0, 4), 0, 0, 0, 0])
  return `${network.toString()}/64`
}
