import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { compileList, ListsSchema } from '../../src/rules/lists'
import type { RequestFacts } from '../../src/types'
import { facts, withHeaders } from '../support/facts'

/** A list as written in a rules document, validated and compiled. */
const list = (input: Record<string, unknown>) =>
  compileList(v.parse(ListsSchema, { allow: input }).allow)!

describe('compileList', () => {
  it('has no matcher for an absent list', () => {
    expect(compileList(undefined)).toBeUndefined()
  })

  it.each<[Record<string, unknown>, Partial<RequestFacts>, string | undefined]>([
    [{ ips: ['203.0.113.7'] }, {}, 'ip 203.0.113.7'],
    [{ ips: ['203.0.113.0/24'] }, {}, 'ip 203.0.113.0/24'],
    [{ ips: ['203.0.113.0/25'] }, { address: '203.0.113.200' }, undefined],
    [{ ips: ['2001:db8::/32'] }, { address: '2001:db8:1::1' }, 'ip 2001:db8::/32'],
    [{ ips: ['2001:db8::/32'] }, { address: '2001:db9::1' }, undefined],
    // An IPv4 range never matches an IPv6 client, nor the other way round.
    [{ ips: ['0.0.0.0/0'] }, { address: '2001:db8::1' }, undefined],
    [{ ips: ['::/0'] }, { address: '203.0.113.7' }, undefined],
    // IPv4-mapped ranges match the IPv4 addresses requests present them as.
    [{ ips: ['::ffff:203.0.113.0/120'] }, {}, 'ip ::ffff:203.0.113.0/120'],
    [{ ips: ['203.0.113.7'] }, { address: undefined }, undefined],
    [{ countries: ['nl'] }, {}, 'country NL'],
    [{ countries: ['T1'] }, { country: 'T1' }, 'country T1'],
    [{ countries: ['DE'] }, {}, undefined],
    [{ countries: ['NL'] }, { country: undefined }, undefined],
    [{ asns: [64500] }, {}, 'asn 64500'],
    [{ asns: [64501] }, {}, undefined],
    [
      { headers: { 'X-Partner': ['acme'] } },
      { headers: new Headers({ 'x-partner': 'acme' }) },
      'header x-partner',
    ],
    [
      { headers: { 'x-partner': ['acme'] } },
      { headers: new Headers({ 'x-partner': 'Acme' }) },
      undefined,
    ],
    [{ headers: { 'x-partner': ['acme'] } }, {}, undefined],
    // The first kind that matches is reported: addresses, then countries, ASNs, headers.
    [{ asns: [64500], ips: ['203.0.113.7'] }, {}, 'ip 203.0.113.7'],
    [{ ips: [], countries: [], asns: [], headers: {} }, {}, undefined],
  ])('%j against %j: %j', (input, overrides, expected) => {
    expect(list(input)(facts(overrides))).toBe(expected)
  })

  it('matches a header value exactly, among several', () => {
    const partners = list({ headers: { 'x-partner': ['acme', 'globex'] } })
    expect(partners(withHeaders({ 'x-partner': 'globex' }))).toBe('header x-partner')
    expect(partners(withHeaders({ 'x-partner': 'acme, globex' }))).toBeUndefined()
  })
})

describe('ListsSchema', () => {
  it.each([
    [{ allow: { ips: ['203.0.113.0/33'] } }, 'allow.ips.0'],
    [{ allow: { ips: ['not-an-ip'] } }, 'allow.ips.0'],
    [{ deny: { countries: ['NLD'] } }, 'deny.countries.0'],
    [{ deny: { asns: [-1] } }, 'deny.asns.0'],
    [{ deny: { headers: { 'bad header': ['x'] } } }, 'deny.headers'],
    [{ deny: { cidrs: [] } }, 'deny'],
    [{ block: {} }, ''],
  ])('refuses %j', (input, path) => {
    const result = v.safeParse(ListsSchema, input)
    expect(result.success).toBe(false)
    const paths = (result.issues ?? []).map((i) => v.getDotPath(i) ?? '')
    expect(paths.some((p) => p.startsWith(path))).toBe(true)
  })

  it('upper-cases country codes', () => {
    expect(v.parse(ListsSchema, { deny: { countries: ['nl', 'T1'] } })).toEqual({
      deny: { countries: ['NL', 'T1'] },
    })
  })
})
