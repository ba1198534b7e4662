/**
 * @module tools/rehearse/sample
 * Generated traffic shaped like a public API's, as Logpush `http_requests` lines, for the
 * rehearsal's benchmark and examples: people behind their own addresses and behind shared
 * (NAT) ones, most with an API key; scrapers; a partner whose one key is used from a fleet of
 * servers; a credential-stuffing botnet and a brute-force attack on one account at `/login`.
 * Lines are in the order requests finish, so a few come up to 2 s before a line above them, as
 * in real Logpush files. Pure and seeded: the same options give the same bytes.
 */
import { mulberry32 } from '../simulate/profile'

/** What to generate. */
export interface SampleOptions {
  seed: number
  requests: number
  /** Requests per second on average. */
  ratePerS: number
  /** Unix ms of the first request. */
  startMs: number
}

/** The default: a million requests over about an hour. */
export const SAMPLE_DEFAULTS: SampleOptions = {
  seed: 45,
  requests: 1_000_000,
  ratePerS: 280,
  startMs: Date.UTC(2026, 10, 2, 9, 0, 0),
}

/** One generated request: what its Logpush line holds. */
export interface SampleRequest {
  atMs: number
  ip: string
  method: string
  host: string
  uri: string
  country: string
  asn: number
  status: number
  headers: Record<string, string>
}

type Pick = () => number

/** One sender of the traffic: how often it sends (relative weight) and what. */
interface Actor {
  weight: number
  send: (pick: Pick) => Omit<SampleRequest, 'atMs' | 'host'>
}

const COUNTRIES = ['us', 'de', 'gb', 'fr', 'in', 'br', 'jp', 'nl', 'ca', 'au']
const HOST = 'api.example.com'

function address(n: number, base = 10): string {
  return `${base}.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`
}

function item(pick: Pick, n: number): number {
  return Math.floor(pick() * n)
}

/** A person's request: browsing, searching, ordering, now and then logging in. */
function person(id: number, ip: string, key: string | undefined): Actor['send'] {
  const country = COUNTRIES[id % COUNTRIES.length]!
  const asn = 64_500 + (id % 400)
  // One key in ten is on the pro plan, and says so.
  const keyed: Record<string, string> = key ? { 'x-api-key': key } : {}
  if (key && id % 10 === 0) keyed['x-plan'] = 'pro'
  return (pick) => {
    const headers = keyed
    const roll = pick()
    const base = { ip, country, asn, headers }
    if (roll < 0.02) {
      const ok = pick() < 0.8
      return {
        ...base,
        method: 'POST',
        uri: '/login',
        status: ok ? 200 : 401,
        headers: { ...headers, 'x-account': `user-${id}` },
      }
    }
    if (roll < 0.3)
      return { ...base, method: 'GET', uri: `/api/search?q=${item(pick, 500)}`, status: 200 }
    if (roll < 0.36) {
      const items = String(1 + item(pick, 5))
      return {
        ...base,
        method: 'POST',
        uri: '/api/orders',
        status: 201,
        headers: { ...headers, 'x-items': items },
      }
    }
    if (roll < 0.9)
      return {
        ...base,
        method: 'GET',
        uri: `/api/items/${item(pick, 5_000)}`,
        status: pick() < 0.03 ? 404 : 200,
      }
    return { ...base, method: 'GET', uri: `/static/app.${item(pick, 20)}.js`, status: 200 }
  }
}

/** The actors: their weights add up to the share of the traffic each sends. */
function actors(pick: Pick): Actor[] {
  const list: Actor[] = []
  // 6,000 people, most with an API key of their own: 1,000 behind four offices' addresses, 2,000
  // behind 500 homes' (NAT), the rest each on an address of their own.
  for (let id = 0; id < 6_000; id++) {
    const ip =
      id < 1_000 ? address(id % 4, 172) : id < 3_000 ? address(id % 500, 100) : address(id, 10)
    const key = pick() < 0.75 ? `key-${id}` : undefined
    list.push({ weight: (0.6 / 6_000) * (0.2 + 3 * pick() ** 3), send: person(id, ip, key) })
  }
  // 10 scrapers, each from one address, no key, paging through items fast.
  for (let n = 0; n < 10; n++) {
    const ip = address(n, 198)
    list.push({
      weight: 0.025,
      send: (p) => ({
        ip,
        method: 'GET',
        uri: `/api/items/${item(p, 5_000)}`,
        status: 200,
        country: 'cn',
        asn: 4134,
        headers: {},
      }),
    })
  }
  // A partner's servers: one key from 40 addresses.
  list.push({
    weight: 0.12,
    send: (p) => ({
      ip: address(item(p, 40), 52),
      method: 'GET',
      uri: `/api/search?q=${item(p, 500)}`,
      status: 200,
      country: 'us',
      asn: 16_509,
      headers: { 'x-api-key': 'key-partner' },
    }),
  })
  // Credential stuffing: 400 addresses, each trying accounts in turn, nearly all failing.
  list.push({
    weight: 0.08,
    send: (p) => ({
      ip: address(item(p, 400), 185),
      method: 'POST',
      uri: '/login',
      status: p() < 0.002 ? 200 : 401,
      country: 'ru',
      asn: 9_009,
      headers: { 'x-account': `user-${item(p, 6_000)}` },
    }),
  })
  // Brute force on one account from one address.
  list.push({
    weight: 0.01,
    send: () => ({
      ip: address(7, 203),
      method: 'POST',
      uri: '/login',
      status: 401,
      country: 'br',
      asn: 28_573,
      headers: { 'x-account': 'user-42' },
    }),
  })
  return list
}

/**
 * The requests, in the order their lines are written.
 *
 * @param options - see {@link SampleOptions}
 */
export function* sampleRequests(options: SampleOptions): Generator<SampleRequest> {
  const pick = mulberry32(options.seed)
  const all = actors(pick)
  const total = all.reduce((sum, actor) => sum + actor.weight, 0)
  const cumulative: number[] = []
  let sum = 0
  for (const actor of all) cumulative.push((sum += actor.weight / total))
  let endMs = options.startMs
  const meanGapMs = 1000 / options.ratePerS
  for (let i = 0; i < options.requests; i++) {
    endMs += -Math.log(1 - pick()) * meanGapMs
    const roll = pick()
    let low = 0
    let high = cumulative.length - 1
    while (low < high) {
      const mid = (low + high) >> 1
      if (cumulative[mid]! < roll) low = mid + 1
      else high = mid
    }
    // Most requests take a few ms; one in twenty is slow, so its line comes late.
    const tookMs = pick() < 0.05 ? pick() * 2_000 : pick() * 30
    yield { atMs: Math.floor(endMs - tookMs), host: HOST, ...all[low]!.send(pick) }
  }
}

/**
 * A request as Logpush writes it (`EdgeStartTimestamp` in Unix nanoseconds, the default).
 *
 * @param request - the request
 * @param n - its number, for a RayID
 */
export function logpushLine(request: SampleRequest, n: number): string {
  const line = JSON.stringify({
    ClientASN: request.asn,
    ClientCountry: request.country,
    ClientIP: request.ip,
    ClientRequestHost: request.host,
    ClientRequestMethod: request.method,
    ClientRequestURI: request.uri,
    EdgeResponseStatus: request.status,
    EdgeStartTimestamp: 0,
    RayID: (0x8f00000000000000n + BigInt(n)).toString(16),
    RequestHeaders: request.headers,
  })
  // Nanoseconds as Logpush writes them: a JSON number past 2^53, digits as they are.
  return line.replace('"EdgeStartTimestamp":0', `"EdgeStartTimestamp":${request.atMs}000000`)
}
