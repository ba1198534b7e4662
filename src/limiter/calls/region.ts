/**
 * @module limiter/region
 * Which of Cloudflare's location-hint regions an isolate serves, from its first request's
 * `request.cf` (the client's continent, country and longitude): where a key's regional object
 * for that isolate's location lives. Clients are mostly near the location that serves them, so a
 * client's region stands for the location's; a wrong guess costs a longer hop, never a unit.
 */

import { LOCATION_HINTS, type LocationHint } from '../../types'

/** A location-hint region. */
export type Region = LocationHint

const REGIONS: ReadonlySet<string> = new Set(LOCATION_HINTS)

/** Asian countries by hint other than `apac` (the rest of Asia, India among them). */
const ASIA: ReadonlyMap<string, Region> = new Map([
  ...[
    'AE',
    'BH',
    'CY',
    'IL',
    'IQ',
    'IR',
    'JO',
    'KW',
    'LB',
    'OM',
    'PS',
    'QA',
    'SA',
    'SY',
    'TR',
    'YE',
  ].map((country) => [country, 'me'] as const),
  ...['CN', 'HK', 'JP', 'KP', 'KR', 'MN', 'MO', 'TW'].map(
    (country) => [country, 'apac-ne'] as const
  ),
  ...['BN', 'ID', 'KH', 'LA', 'MM', 'MY', 'PH', 'SG', 'TH', 'TL', 'VN'].map(
    (country) => [country, 'apac-se'] as const
  ),
])

/** West of this longitude (degrees) North America is `wnam`. */
const WEST_NORTH_AMERICA_LON = -100

/** East of this longitude (degrees) Europe is `eeur`. */
const EAST_EUROPE_LON = 15

/** The facts of `request.cf` a region is read from; each may be missing. */
export interface PlaceFacts {
  readonly continent?: unknown
  readonly country?: unknown
  readonly longitude?: unknown
}

/**
 * The region of a request's client, or `undefined` when its `cf` does not say (local runs,
 * Antarctica, an unknown continent).
 *
 * @param cf - the request's `cf` object
 */
export function regionOf(cf: PlaceFacts | undefined): Region | undefined {
  const longitude = Number(cf?.longitude)
  switch (cf?.continent) {
    case 'NA':
      return longitude < WEST_NORTH_AMERICA_LON ? 'wnam' : 'enam'
    case 'SA':
      return 'sam'
    case 'EU':
      return longitude > EAST_EUROPE_LON ? 'eeur' : 'weur'
    case 'AS':
      return (typeof cf.country === 'string' && ASIA.get(cf.country)) || 'apac'
    case 'OC':
      return 'oc'
    case 'AF':
      return 'afr'
    default:
      return undefined
  }
}

/**
 * Whether a value names a region (what a location object accepts from an isolate's ask).
 *
 * @param value - the value
 */
export function isRegion(value: unknown): value is Region {
  return typeof value === 'string' && REGIONS.has(value)
}
