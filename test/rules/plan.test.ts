import { describe, expect, it } from 'vitest'
import { BadRequestError } from '../../src/errors'
import { parseRules, planRequest, type Plan } from '../../src/rules'
import type { RequestFacts } from '../../src/types'
import { facts as requestFacts } from '../support/facts'
import { documentProblems } from '../support/rules'

const facts = (overrides: Partial<RequestFacts> = {}): RequestFacts =>
  requestFacts({ path: '/login', ...overrides })

const rule = (id: string, fields: Record<string, unknown> = {}) => ({
  id,
  key: ['ip'],
  algorithm: 'sliding-window',
  limit: 5,
  period: '1m',
  ...fields,
})

const plan = (document: Record<string, unknown>, f = facts()): Plan =>
  planRequest(parseRules({ version: 1, ...document }, 't'), f)

const checked = (p: Plan) =>
  p.action === 'limit' ? p.checks.map((c) => [c.rule.id, c.cost, c.shadow]) : p

describe('planRequest', () => {
  it('charges every applying rule one unit by default', () => {
    expect(checked(plan({ rules: [rule('a'), rule('b')] }))).toEqual([
      ['a', 1, false],
      ['b', 1, false],
    ])
  })

  it('turns everything off with mode "off" (the kill switch)', () => {
    expect(
      plan({ mode: 'off', rules: [rule('a')], lists: { deny: { ips: ['0.0.0.0/0'] } } })
    ).toEqual({
      action: 'pass',
    })
  })

  it('puts every rule in shadow with mode "shadow", and only reports a deny-list match', () => {
    expect(
      plan({ mode: 'shadow', rules: [rule('a')], lists: { deny: { countries: ['nl'] } } })
    ).toMatchObject({ action: 'limit', wouldDeny: 'country NL', checks: [{ shadow: true }] })
  })

  it('refuses deny-listed clients, and the deny list wins over the allow list', () => {
    const lists = {
      allow: { ips: ['203.0.113.0/24'] },
      deny: { ips: ['203.0.113.7'], asns: [64501] },
    }
    expect(plan({ rules: [rule('a')], lists })).toEqual({
      action: 'deny',
      denied: 'ip 203.0.113.7',
    })
    expect(plan({ rules: [rule('a')], lists }, facts({ address: '203.0.113.8' }))).toEqual({
      action: 'pass',
      allowed: 'ip 203.0.113.0/24',
    })
  })

  it.each([
    [{ ips: ['2001:db8::/32'] }, facts({ address: '2001:db8:1::5' }), 'ip 2001:db8::/32'],
    [{ ips: ['2001:db8::/32'] }, facts({ address: '203.0.113.7' }), undefined],
    [{ countries: ['nl'] }, facts(), 'country NL'],
    [{ asns: [64500] }, facts(), 'asn 64500'],
    [
      { headers: { 'User-Agent': ['BadBot/1.0'] } },
      facts({ headers: new Headers({ 'user-agent': 'BadBot/1.0' }) }),
      'header user-agent',
    ],
    [
      { headers: { 'User-Agent': ['BadBot/1.0'] } },
      facts({ headers: new Headers({ 'user-agent': 'GoodBot/1.0' }) }),
      undefined,
    ],
  ])('deny list %j', (deny, f, expected) => {
    const result = plan({ rules: [rule('a')], lists: { deny } }, f)
    expect(result.action === 'deny' ? result.denied : undefined).toBe(expected)
  })

  it('lets a specific rule replace a generic one when both apply', () => {
    const rules = [
      rule('api-per-ip'),
      rule('big-customer', {
        match: { headers: { 'x-api-key': ['acme'] } },
        key: ['header:x-api-key'],
        limit: 1000,
        replaces: ['api-per-ip'],
      }),
    ]
    expect(
      checked(plan({ rules }, facts({ headers: new Headers({ 'x-api-key': 'acme' }) })))
    ).toEqual([['big-customer', 1, false]])
    // Without the key part, the specific rule does not apply and so replaces nothing.
    expect(checked(plan({ rules }))).toEqual([['api-per-ip', 1, false]])
  })

  it('takes a constant cost, or a bounded cost from a header', () => {
    const rules = [rule('const', { cost: 3 }), rule('hdr', { cost: { header: 'X-Cost', max: 50 } })]
    expect(checked(plan({ rules }, facts({ headers: new Headers({ 'x-cost': '7' }) })))).toEqual([
      ['const', 3, false],
      ['hdr', 7, false],
    ])
    expect(checked(plan({ rules }))).toEqual([
      ['const', 3, false],
      ['hdr', 1, false],
    ])
  })

  it.each(['-1', '1e309', 'abc', '0', '51', '2.5', ''])('refuses a cost header of %j', (value) => {
    const rules = [rule('hdr', { cost: { header: 'x-cost', max: 50 } })]
    const attempt = () => plan({ rules }, facts({ headers: new Headers({ 'x-cost': value }) }))
    expect(attempt).toThrowError(BadRequestError)
    expect(attempt).toThrowError(
      `The x-cost header must be a whole number from 1 to 50, not ${JSON.stringify(value)}.`
    )
  })
})

describe('validation of the rule features', () => {
  it.each([
    [
      { rules: [rule('a', { replaces: ['a'] })] },
      'rules[0].replaces[0]: a rule cannot replace itself',
    ],
    [
      { rules: [rule('a', { replaces: ['ghost'] })] },
      'rules[0].replaces[0]: no rule has the id "ghost"',
    ],
    [{ rules: [rule('a', { cost: 0 })] }, 'rules[0].cost: 0 must be at least 1'],
    [
      { rules: [rule('a', { penalty: '15 minutes' })] },
      'rules[0].penalty: "15 minutes" is not a duration (use "10s", "1m", "1h", "1d" or seconds, up to 365d)',
    ],
    [
      { rules: [rule('a', { shadow: 'yes' })] },
      'rules[0].shadow: expected true or false, got "yes"',
    ],
    [{ mode: 'audit', rules: [] }, 'mode: "audit" is not "enforce", "shadow" or "off"'],
    [
      { rules: [], lists: { deny: { ips: ['10.0.0.0/33'] } } },
      'lists.deny.ips[0]: "10.0.0.0/33" is not an IP address or CIDR range',
    ],
    [
      { rules: [], lists: { deny: { countries: ['NLD'] } } },
      'lists.deny.countries[0]: "NLD" is not a two-character country code',
    ],
    [{ rules: [], lists: { block: {} } }, 'lists: unknown field "block"'],
  ])('%j', (document, message) => {
    expect(documentProblems(document)).toEqual([message])
  })

  it.each([
    [
      { rules: [rule('a', { replaces: ['b'] }), rule('b', { replaces: ['a'] })] },
      'rules[0].replaces: a → b → a replace each other in a cycle',
    ],
    [
      { rules: [rule('a', { cost: { header: 'x-cost', max: 2, default: 5 } })] },
      'rules[0].cost.default: 5 must be at most max (2)',
    ],
    [
      { rules: [rule('a', { cost: 6 })] },
      'rules[0].cost: 6 is more than the rule can ever admit (5)',
    ],
    [
      {
        rules: [
          rule('a', {
            algorithm: 'sliding-log',
            tiers: { from: 'header:x-plan', limits: { big: 1_000_000 } },
          }),
        ],
      },
      'rules[0].tiers.limits.big: 1000000 must be at most 10000 for a sliding log',
    ],
    [
      { rules: [rule('a', { algorithm: 'leaky-bucket', mode: 'shape', maxWait: '2m' })] },
      'rules[0].maxWait: a shaped request may wait at most 60s (set maxWait, or a shorter period)',
    ],
  ])('cross-checks %j', (document, message) => {
    expect(documentProblems(document)).toEqual([message])
  })

  const replacing = (fields: Record<string, unknown>) => ({
    jwt: { alg: 'HS256', secret: 'env:JWT_SECRET' },
    rules: [rule('generic'), rule('specific', { replaces: ['generic'], ...fields })],
  })
  const untrusted = (part: string, fix: string) =>
    `rules[1].replaces: the key part ${JSON.stringify(part)} is chosen by the client, who could invent values to escape "generic"; ${fix}, or key on ip, cf:country, cf:asn or claim:<name>`

  it.each([
    { key: ['ip'] },
    { key: [] },
    { key: ['cf:country', 'cf:asn'] },
    { key: ['claim:sub'] },
    { key: ['header:x-api-key'], match: { headers: { x_api_key: ['k1'] } } },
    { key: ['query:api.key'], match: { query: { api_key: ['k1'] } } },
    { key: ['method'], match: { methods: ['POST'] } },
    { key: ['host', 'ip'], match: { host: ['a.example.com', 'b.example.com'] } },
  ])('lets a rule keyed on values the client cannot invent replace others: %j', (fields) => {
    expect(() => parseRules({ version: 1, ...replacing(fields) }, 't')).not.toThrow()
  })

  it.each([
    [
      { key: ['header:x-api-key'] },
      [untrusted('header:x-api-key', 'list its accepted values in match.headers')],
    ],
    [
      { key: ['header:x-api-key'], match: { headers: { 'x-tenant': ['t1'] } } },
      [untrusted('header:x-api-key', 'list its accepted values in match.headers')],
    ],
    [
      { key: ['query:api_key'] },
      [untrusted('query:api_key', 'list its accepted values in match.query')],
    ],
    [{ key: ['ip', 'path'] }, [untrusted('path', 'drop it from the key')]],
    [{ key: ['method'] }, [untrusted('method', 'list the methods in match.methods')]],
    [
      { key: ['host'], match: { host: '*.example.com' } },
      [untrusted('host', 'list exact host names (no "*") in match.host')],
    ],
    [
      { key: ['header:x-a', 'query:b'] },
      [
        untrusted('header:x-a', 'list its accepted values in match.headers'),
        untrusted('query:b', 'list its accepted values in match.query'),
      ],
    ],
  ])('refuses a replacing rule keyed on values the client invents: %j', (fields, messages) => {
    expect(documentProblems(replacing(fields))).toEqual(messages)
  })

  it('at the per-IP limit, an invented API key never drops the per-IP rule', () => {
    const rules = [
      rule('api-per-ip'),
      rule('acme', {
        match: { headers: { 'x-api-key': ['acme'] } },
        key: ['header:x-api-key'],
        replaces: ['api-per-ip'],
      }),
    ]
    for (const key of ['junk1', 'junk2', 'ACME', 'acme2', 'junk, acme']) {
      const headers = new Headers({ 'x-api-key': key })
      expect(checked(plan({ rules }, facts({ headers }))), key).toEqual([['api-per-ip', 1, false]])
    }
    const listed = new Headers({ 'x-api-key': 'acme' })
    expect(checked(plan({ rules }, facts({ headers: listed })))).toEqual([['acme', 1, false]])
  })

  it('matches IPv4-mapped ranges and T1 (Tor) in lists', () => {
    const lists = { deny: { ips: ['::ffff:203.0.113.0/120'], countries: ['t1'] } }
    expect(plan({ rules: [rule('a')], lists })).toEqual({
      action: 'deny',
      denied: 'ip ::ffff:203.0.113.0/120',
    })
    expect(
      plan({ rules: [rule('a')], lists }, facts({ address: '198.51.100.1', country: 'T1' }))
    ).toEqual({
      action: 'deny',
      denied: 'country T1',
    })
  })

  it('never refuses a request for a rule in shadow, even one it cannot read', () => {
    const shadowed = rule('dark', { shadow: true, cost: { header: 'x-cost', max: 10 } })
    const result = plan(
      { rules: [shadowed, rule('lit')] },
      facts({ headers: new Headers({ 'x-cost': 'abc' }) })
    )
    expect(result).toMatchObject({
      action: 'limit',
      skipped: [{ rule: { id: 'dark' }, why: 'unreadable' }],
      checks: [{ rule: { id: 'lit' } }],
    })
  })

  it('says why each other matching rule is not charged: its key is absent, or it is replaced', () => {
    const keyed = rule('keyed', { key: ['header:x-api-key'] })
    const replacing = rule('replacing', { key: ['cf:country'], replaces: ['a'] })
    const result = plan(
      { rules: [rule('a'), keyed, replacing, rule('elsewhere', { match: { path: '/other' } })] },
      facts({ country: 'NL' })
    )
    expect(result).toMatchObject({
      action: 'limit',
      checks: [{ rule: { id: 'replacing' } }],
      skipped: [
        { rule: { id: 'keyed' }, why: 'no-key' },
        { rule: { id: 'a' }, why: 'replaced' },
      ],
    })
    expect(result.action === 'limit' && result.skipped).toHaveLength(2)
  })

  it('compiles a penalty into the policy', () => {
    const [r] = parseRules({ version: 1, rules: [rule('login', { penalty: '15m' })] }, 't').rules
    expect(r?.policy).toEqual({
      algorithm: 'sliding-window',
      limit: 5,
      periodMs: 60_000,
      penaltyMs: 900_000,
    })
  })
})
