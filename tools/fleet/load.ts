/**
 * @module tools/fleet/load
 * The fleet's load: Poisson arrivals of one hot key's requests at a rate that may change with
 * time, each sent to a location drawn by its share of traffic and to one of that location's
 * isolates at random, with that location's `request.cf`, to Miniflare's entry on 127.0.0.1.
 * Requests in flight are bounded; an arrival over the bound is counted and not sent.
 */
import { AliasTable, exponential, stream } from '../scale/random'
import { WORKER_MS_HEADER } from './entry'
import type { PlaceCf } from './world'

/** One request as the harness saw it. */
export interface Sent {
  sentMs: number
  answeredMs: number
  /** HTTP status; 0 when no answer came (the connection failed). */
  status: number
  /** The limiter let it through undecided (`X-RateLimit-Unenforced`: failed open). */
  unenforced: boolean
  /** The Worker's own time on it (ms), when it answered. */
  workerMs: number | null
  isolate: number
  cost: number
}

/** What the load needs to know. */
export interface LoadSpec {
  url: string
  /** Each location's share of traffic. */
  weights: readonly number[]
  cf: readonly PlaceCf[]
  isolateAt: readonly number[]
  isolateName: (index: number) => string
  /** Requests per second at an instant (epoch ms). */
  rateAt: (atMs: number) => number
  /** Units each request costs. */
  cost: number
  seed: number
  /** Most requests in flight. */
  maxInFlight: number
}

/** A running load. */
export interface Load {
  /** Requests sent so far. */
  readonly sent: Sent[]
  /** Arrivals not sent: too many in flight, or paused. */
  readonly dropped: number
  /** Holds arrivals (a restart): they are dropped, counted, until resumed. */
  pause(paused: boolean): void
  /** Stops arriving at `endMs` and waits for every answer. */
  until(endMs: number): Promise<Sent[]>
}

/**
 * Starts sending now.
 *
 * @param spec - where and how much
 */
export function startLoad(spec: LoadSpec): Load {
  const random = stream(spec.seed, 'fleet traffic')
  const where = new AliasTable(spec.weights)
  const byLocation = spec.weights.map((_, l) =>
    spec.isolateAt.flatMap((at, i) => (at === l ? [i] : []))
  )
  const sent: Sent[] = []
  const inFlight = new Set<Promise<void>>()
  let dropped = 0
  let paused = false
  let nextMs = Date.now()
  const send = (isolate: number, location: number) => {
    const sentMs = Date.now()
    const record: Sent = {
      sentMs,
      answeredMs: sentMs,
      status: 0,
      unenforced: false,
      workerMs: null,
      isolate,
      cost: spec.cost,
    }
    sent.push(record)
    const done = fetch(new URL('/api/hot', spec.url), {
      headers: {
        'MF-Route-Override': spec.isolateName(isolate),
        'MF-CF-Blob': JSON.stringify(spec.cf[location]),
        'x-cost': String(spec.cost),
      },
    })
      .then(async (response) => {
        await response.arrayBuffer()
        record.status = response.status
        record.unenforced = response.headers.has('x-ratelimit-unenforced')
        const workerMs = response.headers.get(WORKER_MS_HEADER)
        record.workerMs = workerMs === null ? null : Number(workerMs)
      })
      .catch(() => undefined)
      .finally(() => {
        record.answeredMs = Date.now()
        inFlight.delete(done)
      })
    inFlight.add(done)
  }
  const tick = (endMs: number) => {
    const nowMs = Math.min(Date.now(), endMs)
    while (nextMs <= nowMs) {
      const location = where.draw(random)
      const here = byLocation[location]!
      const isolate = here[Math.floor(random() * here.length)]!
      if (paused || inFlight.size >= spec.maxInFlight) dropped++
      else send(isolate, location)
      const rate = spec.rateAt(nextMs)
      nextMs += rate > 0 ? exponential(random, 1000 / rate) : 100
    }
  }
  return {
    sent,
    get dropped() {
      return dropped
    },
    pause(value) {
      paused = value
    },
    async until(endMs) {
      while (Date.now() < endMs) {
        tick(endMs)
        await new Promise((resolve) => setTimeout(resolve, 2))
      }
      await Promise.all(inFlight)
      return sent
    },
  }
}
