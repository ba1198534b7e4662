import { describe, expect, it } from 'vitest'
import { AliasTable, stream } from '../../../tools/scale/random'
import { REGIONS } from '../../../tools/scale/regions'
import { buildWorld, greatCircleKm, shares } from '../../../tools/scale/world'

describe('the world', () => {
  const world = buildWorld(300)
  const at = (metro: string) => world.locations.find((l) => l.name.endsWith(` ${metro}`))!

  it('has 300 locations over the regions by their sites, weights adding up to 1', () => {
    expect(world.locations).toHaveLength(300)
    for (const region of REGIONS)
      expect(world.locations.filter((l) => l.region === region.hint)).toHaveLength(region.sites)
    const total = world.locations.reduce((a, l) => a + l.weight, 0)
    expect(total).toBeCloseTo(1, 9)
  })

  it('puts London and New York 42 ms apart one way, and a location 2 ms from itself', () => {
    expect(greatCircleKm(at('London'), at('New York'))).toBeCloseTo(5_570, -2)
    expect(world.oneWayMs(at('London').index, at('New York').index)).toBe(44)
    expect(world.oneWayMs(at('New York').index, at('London').index)).toBe(44)
    expect(world.oneWayMs(at('Tokyo').index, at('Tokyo').index)).toBe(2)
    expect(world.oneWayMs(at('Sydney').index, at('London').index)).toBeGreaterThan(120)
  })

  it('places an object with a location hint at the location nearest the region’s first metro', () => {
    expect(world.locations[world.hintLocation('weur')]!.name).toMatch(/Frankfurt$/)
    const small = buildWorld(5)
    expect(small.locations).toHaveLength(5)
    expect(small.hintLocation('oc')).toBeLessThan(5)
  })

  it('is the same for the same count', () => {
    expect(buildWorld(50).locations).toEqual(buildWorld(50).locations)
  })
})

describe('shares', () => {
  it('splits a total in proportion, whole, with a floor for every weight above 0', () => {
    expect(shares([1, 1, 2], 8)).toEqual([2, 2, 4])
    expect(shares([100, 1, 0], 10, 1)).toEqual([9, 1, 0])
    expect(shares([1, 1, 1], 2, 1)).toEqual([1, 1, 0])
  })
})

describe('the alias table', () => {
  it('draws each index about as often as its weight says', () => {
    const table = new AliasTable([1, 0, 3])
    const random = stream(7, 'test')
    const counts = [0, 0, 0]
    for (let i = 0; i < 40_000; i++) counts[table.draw(random)]!++
    expect(counts[1]).toBe(0)
    expect(counts[2]! / counts[0]!).toBeGreaterThan(2.8)
    expect(counts[2]! / counts[0]!).toBeLessThan(3.2)
  })
})
