/**
 * @module tools/scale/regions
 * The world the simulator places locations in: Cloudflare's location-hint regions, the
 * continent each belongs to, how many of 300 locations it holds and what share of traffic it
 * sends (an estimate of Cloudflare's footprint: most cities in Europe, North America and Asia,
 * fewer elsewhere; the shares are this project's assumption, not published figures), and the
 * metros locations cluster around (latitude, longitude in degrees).
 */
import type { LocationHint } from '../../src/types'

/** A continent: what the `shift` scenario moves traffic between. */
export type Continent =
  'north-america' | 'south-america' | 'europe' | 'middle-east' | 'africa' | 'asia' | 'oceania'

/** One location-hint region. */
export interface Region {
  hint: LocationHint
  continent: Continent
  /** Locations it holds of 300. */
  sites: number
  /** Its share of all traffic. */
  share: number
  /** Metros, heaviest first: the first locations sit on them, the rest around them. */
  metros: readonly (readonly [name: string, latDeg: number, lonDeg: number])[]
}

/** The regions; sites add up to 300 and shares to 1. */
export const REGIONS: readonly Region[] = [
  {
    hint: 'enam',
    continent: 'north-america',
    sites: 33,
    share: 0.2,
    metros: [
      ['Ashburn', 39.0, -77.5],
      ['New York', 40.7, -74.0],
      ['Chicago', 41.9, -87.6],
      ['Atlanta', 33.7, -84.4],
      ['Dallas', 32.8, -96.8],
      ['Toronto', 43.7, -79.4],
      ['Miami', 25.8, -80.2],
      ['Montreal', 45.5, -73.6],
    ],
  },
  {
    hint: 'wnam',
    continent: 'north-america',
    sites: 24,
    share: 0.12,
    metros: [
      ['San Jose', 37.3, -121.9],
      ['Los Angeles', 34.1, -118.2],
      ['Seattle', 47.6, -122.3],
      ['Denver', 39.7, -105.0],
      ['Phoenix', 33.4, -112.1],
      ['Vancouver', 49.3, -123.1],
      ['Mexico City', 19.4, -99.1],
    ],
  },
  {
    hint: 'sam',
    continent: 'south-america',
    sites: 40,
    share: 0.06,
    metros: [
      ['São Paulo', -23.5, -46.6],
      ['Buenos Aires', -34.6, -58.4],
      ['Bogotá', 4.7, -74.1],
      ['Santiago', -33.4, -70.7],
      ['Rio de Janeiro', -22.9, -43.2],
      ['Lima', -12.0, -77.0],
    ],
  },
  {
    hint: 'weur',
    continent: 'europe',
    sites: 48,
    share: 0.25,
    metros: [
      ['Frankfurt', 50.1, 8.7],
      ['London', 51.5, -0.1],
      ['Amsterdam', 52.4, 4.9],
      ['Paris', 48.9, 2.35],
      ['Madrid', 40.4, -3.7],
      ['Milan', 45.5, 9.2],
      ['Stockholm', 59.3, 18.1],
      ['Dublin', 53.3, -6.3],
    ],
  },
  {
    hint: 'eeur',
    continent: 'europe',
    sites: 25,
    share: 0.06,
    metros: [
      ['Warsaw', 52.2, 21.0],
      ['Istanbul', 41.0, 29.0],
      ['Prague', 50.1, 14.4],
      ['Bucharest', 44.4, 26.1],
      ['Helsinki', 60.2, 24.9],
      ['Athens', 37.98, 23.7],
    ],
  },
  {
    hint: 'me',
    continent: 'middle-east',
    sites: 17,
    share: 0.02,
    metros: [
      ['Dubai', 25.2, 55.3],
      ['Tel Aviv', 32.1, 34.8],
      ['Riyadh', 24.7, 46.7],
      ['Doha', 25.3, 51.5],
      ['Baghdad', 33.3, 44.4],
    ],
  },
  {
    hint: 'afr',
    continent: 'africa',
    sites: 20,
    share: 0.02,
    metros: [
      ['Johannesburg', -26.2, 28.0],
      ['Lagos', 6.5, 3.4],
      ['Nairobi', -1.3, 36.8],
      ['Cairo', 30.0, 31.2],
      ['Cape Town', -33.9, 18.4],
      ['Casablanca', 33.6, -7.6],
    ],
  },
  {
    hint: 'apac',
    continent: 'asia',
    sites: 25,
    share: 0.07,
    metros: [
      ['Mumbai', 19.1, 72.9],
      ['Delhi', 28.6, 77.2],
      ['Chennai', 13.1, 80.3],
      ['Bangalore', 12.97, 77.6],
      ['Kolkata', 22.6, 88.4],
      ['Karachi', 24.9, 67.0],
    ],
  },
  {
    hint: 'apac-se',
    continent: 'asia',
    sites: 25,
    share: 0.07,
    metros: [
      ['Singapore', 1.35, 103.8],
      ['Jakarta', -6.2, 106.8],
      ['Bangkok', 13.8, 100.5],
      ['Kuala Lumpur', 3.1, 101.7],
      ['Manila', 14.6, 121.0],
      ['Ho Chi Minh City', 10.8, 106.7],
    ],
  },
  {
    hint: 'apac-ne',
    continent: 'asia',
    sites: 31,
    share: 0.1,
    metros: [
      ['Tokyo', 35.7, 139.7],
      ['Hong Kong', 22.3, 114.2],
      ['Seoul', 37.6, 127.0],
      ['Osaka', 34.7, 135.5],
      ['Taipei', 25.0, 121.6],
      ['Shanghai', 31.2, 121.5],
    ],
  },
  {
    hint: 'oc',
    continent: 'oceania',
    sites: 12,
    share: 0.03,
    metros: [
      ['Sydney', -33.9, 151.2],
      ['Melbourne', -37.8, 145.0],
      ['Auckland', -36.8, 174.8],
      ['Brisbane', -27.5, 153.0],
      ['Perth', -31.95, 115.9],
    ],
  },
]

/**
 * Where half of each continent's traffic goes in the `shift` scenario: to the next continent
 * in this ring.
 */
export const SHIFT_RING: readonly Continent[] = [
  'north-america',
  'europe',
  'middle-east',
  'africa',
  'asia',
  'oceania',
  'south-america',
]
