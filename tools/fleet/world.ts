/**
 * @module tools/fleet/world
 * The fleet's places: the scale simulator's world of `locations` locations (`tools/scale/world`,
 * the same names, regions, traffic shares and fibre delays), the `request.cf` each location's
 * requests carry (so that the limiter reads the region the simulator gives it), how many isolates
 * each location runs, and the hop table the entry delays calls by.
 */
import type { LocationHint } from '../../src/types'
import { buildWorld, shares, type World } from '../scale/world'
import type { HopTable } from './entry'

/** What `request.cf` says at one location (the fields the limiter reads). */
export interface PlaceCf {
  colo: string
  continent: string
  country: string
  longitude: string
  latitude: string
}

/** A region's continent code and a country in it, as `request.cf` gives them. */
const CF_OF_REGION: Readonly<Record<LocationHint, readonly [continent: string, country: string]>> =
  {
    enam: ['NA', 'US'],
    wnam: ['NA', 'US'],
    sam: ['SA', 'BR'],
    weur: ['EU', 'DE'],
    eeur: ['EU', 'PL'],
    me: ['AS', 'AE'],
    afr: ['AF', 'ZA'],
    apac: ['AS', 'IN'],
    'apac-se': ['AS', 'SG'],
    'apac-ne': ['AS', 'JP'],
    oc: ['OC', 'AU'],
  }

/** The fleet's world. */
export interface FleetWorld {
  /** The simulator's world of the same size. */
  world: World
  /** Each location's `request.cf`. */
  cf: PlaceCf[]
  /** The location of each isolate (index: the isolate's number). */
  isolateAt: number[]
  /** Regions with a location. */
  regions: LocationHint[]
  /** The hops the entry delays calls by. */
  hops: HopTable
}

/**
 * The fleet's world: `isolates` isolates over `locations` locations, in proportion to traffic
 * and at least one each, as the simulator spreads them.
 *
 * @param isolates - how many isolates
 * @param locations - how many locations (at most `isolates`)
 */
export function fleetWorld(isolates: number, locations: number): FleetWorld {
  const world = buildWorld(locations)
  const cf = world.locations.map((l): PlaceCf => {
    const [continent, country] = CF_OF_REGION[l.region]
    return {
      colo: l.name,
      continent,
      country,
      longitude: l.lonDeg.toFixed(2),
      latitude: l.latDeg.toFixed(2),
    }
  })
  const isolateAt = shares(
    world.locations.map((l) => l.weight),
    isolates,
    1
  ).flatMap((n, location) => Array.from({ length: n }, () => location))
  const regions = [...new Set(world.locations.map((l) => l.region))]
  const n = world.locations.length
  const hops: HopTable = {
    colos: world.locations.map((l) => l.name),
    oneWayMs: Array.from({ length: n }, (_, a) =>
      Array.from({ length: n }, (_, b) => world.oneWayMs(a, b))
    ),
    regionAt: Object.fromEntries(regions.map((r) => [r, world.hintLocation(r)])),
  }
  return { world, cf, isolateAt, regions, hops }
}
