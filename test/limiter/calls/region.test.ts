import { describe, expect, it } from 'vitest'
import { isRegion, regionOf } from '../../../src/limiter/calls/region'

describe('regionOf', () => {
  it.each([
    [{ continent: 'NA', longitude: '-122.42' }, 'wnam'],
    [{ continent: 'NA', longitude: '-77.04' }, 'enam'],
    [{ continent: 'SA', longitude: '-46.63' }, 'sam'],
    [{ continent: 'EU', longitude: '2.35' }, 'weur'],
    [{ continent: 'EU', longitude: '21.01' }, 'eeur'],
    [{ continent: 'AS', country: 'AE' }, 'me'],
    [{ continent: 'AS', country: 'JP' }, 'apac-ne'],
    [{ continent: 'AS', country: 'SG' }, 'apac-se'],
    [{ continent: 'AS', country: 'IN' }, 'apac'],
    [{ continent: 'OC', country: 'AU' }, 'oc'],
    [{ continent: 'AF', country: 'ZA' }, 'afr'],
  ] as const)('reads %j as %s', (cf, region) => {
    expect(regionOf(cf)).toBe(region)
    expect(isRegion(region)).toBe(true)
  })

  it('takes a longitude it cannot read as the larger half of its continent', () => {
    expect(regionOf({ continent: 'NA', longitude: 'west' })).toBe('enam')
    expect(regionOf({ continent: 'EU' })).toBe('weur')
  })

  it('says none for a request without a continent it knows (local runs, Antarctica)', () => {
    expect(regionOf(undefined)).toBeUndefined()
    expect(regionOf({})).toBeUndefined()
    expect(regionOf({ continent: 'AN' })).toBeUndefined()
    expect(regionOf({ continent: 7 })).toBeUndefined()
  })

  it('accepts only location hints as regions', () => {
    expect(isRegion('FRA')).toBe(false)
    expect(isRegion('region:weur')).toBe(false)
    expect(isRegion(undefined)).toBe(false)
  })
})
