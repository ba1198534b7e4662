/**
 * @module tools/scale/world
 * Locations and the delays between them. `count` locations are shared out over the regions of
 * `regions.ts` in proportion to their sites; each sits on one of its region's metros or, past the
 * metros, within about 150 km of one. The one-way delay between two locations is
 *
 *     oneWayMs = BASE_MS + ROUTE_FACTOR × greatCircleKm / FIBRE_KM_PER_MS
 *
 * light in fibre covering about 200 km per ms (2/3 c), routes 1.5 times longer than the great
 * circle, and 2 ms of switching and in-location hops, rounded to whole ms. Bozkurt et al.,
 * "Dissecting Latency in the Internet's Fiber Infrastructure" (2018, arXiv:1811.10737) measure
 * the public Internet at 2.1 × line-of-sight over fibre speed and the shortest conduit paths at
 * 1.3; a CDN's own backbone sits between. London–New York comes out at 44 ms one way.
 */
import type { LocationHint } from '../../src/types'
import { stream } from './random'
import { REGIONS, type Continent } from './regions'

/** Switching and in-location hops, one way (ms). */
export const BASE_MS = 2
/** How much longer routes are than the great circle. */
export const ROUTE_FACTOR = 1.5
/** Light in fibre (km per ms, 2/3 c). */
export const FIBRE_KM_PER_MS = 200

/** One location (a Cloudflare city). */
export interface Location {
  index: number
  /** `<region>-<n> <metro>`, what `request.cf.colo` stands for here. */
  name: string
  region: LocationHint
  continent: Continent
  latDeg: number
  lonDeg: number
  /** Its share of traffic in the default (footprint) distribution; all add up to 1. */
  weight: number
}

/** The locations and their delays. */
export interface World {
  locations: readonly Location[]
  /** One-way delay (whole ms). */
  oneWayMs(from: number, to: number): number
  /** Where an object created with a location hint lives: the location nearest its first metro. */
  hintLocation(hint: LocationHint): number
}

/**
 * A world of `count` locations (the same for the same count).
 *
 * @param count - how many locations, 1 to 300
 */
export function buildWorld(count: number): World {
  const random = stream(0, 'world')
  const perRegion = shares(
    REGIONS.map((region) => region.sites),
    count
  )
  const locations: Location[] = []
  REGIONS.forEach((region, r) => {
    const n = perRegion[r]!
    const weights = Array.from({ length: n }, (_, k) => 1 / (1 + k) ** 0.8)
    const total = weights.reduce((a, b) => a + b, 0)
    for (let k = 0; k < n; k++) {
      const [metro, lat, lon] = region.metros[k % region.metros.length]!
      const near = k >= region.metros.length
      locations.push({
        index: locations.length,
        name: `${region.hint}-${k + 1} ${metro}${near ? ' area' : ''}`,
        region: region.hint,
        continent: region.continent,
        latDeg: near ? lat + (random() - 0.5) * 2.7 : lat,
        lonDeg: near ? lon + (random() - 0.5) * 2.7 : lon,
        weight: (region.share * weights[k]!) / total,
      })
    }
  })
  const sum = locations.reduce((a, l) => a + l.weight, 0)
  for (const location of locations) location.weight /= sum
  const n = locations.length
  const delays = new Int32Array(n * n)
  for (let a = 0; a < n; a++)
    for (let b = 0; b < n; b++)
      delays[a * n + b] = Math.round(
        BASE_MS + (ROUTE_FACTOR * greatCircleKm(locations[a]!, locations[b]!)) / FIBRE_KM_PER_MS
      )
  return {
    locations,
    oneWayMs: (from, to) => delays[from * n + to]!,
    hintLocation(hint) {
      const region = REGIONS.find((r) => r.hint === hint)!
      const [, latDeg, lonDeg] = region.metros[0]!
      let best = 0
      for (const location of locations)
        if (
          greatCircleKm(location, { latDeg, lonDeg }) <
          greatCircleKm(locations[best]!, { latDeg, lonDeg })
        )
          best = location.index
      return best
    },
  }
}

/**
 * Great-circle distance (haversine, mean Earth radius 6,371 km).
 *
 * @param a - one point
 * @param b - the other
 */
export function greatCircleKm(
  a: { latDeg: number; lonDeg: number },
  b: { latDeg: number; lonDeg: number }
): number {
  const rad = Math.PI / 180
  const dLat = (b.latDeg - a.latDeg) * rad
  const dLon = (b.lonDeg - a.lonDeg) * rad
  const h =
    Math.sin(dLat / 2) ** 2 +
    Math.cos(a.latDeg * rad) * Math.cos(b.latDeg * rad) * Math.sin(dLon / 2) ** 2
  return 2 * 6371 * Math.asin(Math.min(1, Math.sqrt(h)))
}

/**
 * Splits `total` into whole parts proportional to `weights` (largest remainder).
 *
 * @param weights - non-negative
 * @param total - what to split
 * @param min - the least each part with a weight above 0 gets (when `total` allows)
 */
export function shares(weights: readonly number[], total: number, min = 0): number[] {
  const sum = weights.reduce((a, b) => a + b, 0)
  const floor = weights.map((w) => (w > 0 ? min : 0))
  const left = total - floor.reduce((a, b) => a + b, 0)
  if (left < 0) return shares(weights, total, 0)
  const exact = weights.map((w) => (w / sum) * left)
  const parts = exact.map((x, i) => floor[i]! + Math.floor(x))
  let rest = total - parts.reduce((a, b) => a + b, 0)
  const order = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0])
  for (const [, i] of order) {
    if (rest-- <= 0) break
    parts[i]!++
  }
  return parts
}
