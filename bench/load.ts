// Load generation with autocannon: a warm-up and a measured run per scenario, every request
// carrying a cf-connecting-ip from the scenario's key source.
import autocannon from 'autocannon'

/** The one client address of the hot-key scenarios. */
export const HOT_IP = '203.0.113.7'

/** What a measured run observed. */
export interface LoadResult {
  seconds: number
  requests: number
  /** Mean of autocannon's per-second request counts. */
  rps: number
  p50Ms: number
  p99Ms: number
  non2xx: number
  /** Connection errors, including timeouts. */
  errors: number
  timeouts: number
  statusCodes: Record<string, number>
}

type Request = { headers: Record<string, string> }
type Tracker = PromiseLike<AutocannonResult> & {
  stop: () => void
  on: (
    event: 'response',
    listener: (client: unknown, status: number, bytes: number, ms: number) => void
  ) => void
}
type AutocannonResult = {
  duration: number
  requests: { mean: number; total: number }
  non2xx: number
  errors: number
  timeouts: number
  statusCodeStats: Record<string, { count: number }>
}

// Everything in flight, so that an interrupted run can be stopped before targets go away.
const running = new Set<Tracker>()

// A path with a query, so that forwarding has to rebuild both.
const PATH = '/bench/item?id=1'
const WARM_UP_REQUESTS = 200
const WARM_UP_CONNECTIONS = 20
// Bounds a hung target; creating 10,000 keys on a busy machine takes a while.
const WARM_UP_LIMIT_MS = 180_000

/** What the client addresses of a scenario look like. */
export type KeyMode = 'hot' | 'many' | 'new'

/**
 * A source of client addresses: always the hot one; a cycle of `keys` addresses (each key's
 * Durable Object exists after a warm-up of `keys` requests); or a never-seen 10.x.y.z on every
 * call, which measures creating a Durable Object per request.
 */
export function ipSource(mode: KeyMode, keys = 0): () => string {
  if (mode === 'hot') return () => HOT_IP
  const cycle = mode === 'many' ? keys : 0xfffffe
  let n = 0
  return () => {
    n = (n % cycle) + 1
    return `10.${n >> 16}.${(n >> 8) & 255}.${n & 255}`
  }
}

function start(
  url: string,
  connections: number,
  nextIp: () => string,
  limit: { duration: number } | { amount: number },
  rate?: number
): Tracker {
  const tracker: Tracker = autocannon({
    url: new URL(PATH, url).href,
    connections,
    ...limit,
    ...(rate === undefined ? {} : { overallRate: rate }),
    // Used by every scenario, even with a fixed address, so that the load generator does the same
    // work per request everywhere.
    requests: [
      {
        setupRequest: (request: Request) => ({
          ...request,
          headers: { ...request.headers, 'cf-connecting-ip': nextIp() },
        }),
      },
    ],
  })
  running.add(tracker)
  return tracker
}

/**
 * Sends `amount` requests (at least ~200) so that the isolate, its rules and the Durable
 * Objects are warm; resolves the status counts.
 */
export async function warmUp(
  url: string,
  nextIp: () => string,
  amount = WARM_UP_REQUESTS
): Promise<Record<string, number>> {
  return burst(url, nextIp, Math.max(amount, WARM_UP_REQUESTS), WARM_UP_CONNECTIONS)
}

/** Sends exactly `amount` requests, `connections` at a time; resolves the status counts. */
export async function burst(
  url: string,
  nextIp: () => string,
  amount: number,
  connections: number
): Promise<Record<string, number>> {
  const tracker = start(url, connections, nextIp, { amount })
  // `amount` runs ignore `duration`, so bound a hung target here.
  const timer = setTimeout(() => tracker.stop(), WARM_UP_LIMIT_MS)
  try {
    return statusCounts(await tracker)
  } finally {
    clearTimeout(timer)
    running.delete(tracker)
  }
}

/**
 * Runs `connections` closed-loop connections for `duration` seconds, at most `rate` requests
 * per second in all if given, and summarises them.
 */
export async function measure(
  url: string,
  connections: number,
  duration: number,
  nextIp: () => string,
  rate?: number
): Promise<LoadResult> {
  const tracker = start(url, connections, nextIp, { duration }, rate)
  // autocannon's histogram has 1 ms resolution, too coarse for loopback latencies.
  const latencies: number[] = []
  tracker.on('response', (_client, _status, _bytes, ms) => latencies.push(ms))
  let result: AutocannonResult
  try {
    result = await tracker
  } finally {
    running.delete(tracker)
  }
  const sorted = Float64Array.from(latencies).sort()
  const statusCodes = statusCounts(result)
  return {
    seconds: result.duration,
    requests: result.requests.total,
    rps: result.requests.mean,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
  }
}

function statusCounts(result: AutocannonResult): Record<string, number> {
  return Object.fromEntries(
    Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count])
  )
}

/** Stops every run still in flight. */
export function stopAll(): void {
  for (const tracker of running) tracker.stop()
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN
  )
}
