import { describe, expect, it } from 'vitest'
import { limitKey, parseRules } from '../../src/rules'
import { matchRules } from '../support/rules'
import type { RequestFacts } from '../../src/types'

const facts = (overrides: Partial<RequestFacts> = {}): RequestFacts => ({
  method: 'GET',
  host: 'api.example.com',
  path: '/api/users/7',
  query: new URLSearchParams('page=2&tenant=acme'),
  headers: new Headers({ 'x-api-key': 'k-123', 'x-empty': '' }),
  ip: '203.0.113.7',
  country: 'NL',
  asn: 64500,
  ...overrides,
})

const ruleSet = parseRules(
  {
    version: 1,
    rules: [
      { id: 'everything', key: [], algorithm: 'sliding-window', limit: 1000, period: '1s' },
      {
        id: 'api',
        match: { path: '/api/*', methods: ['GET', 'POST'] },
        key: ['ip'],
        algorithm: 'sliding-window',
        limit: 5,
        period: '1m',
      },
      {
        id: 'login',
        match: { path: ['/login', '/auth/*/token'], methods: ['POST'] },
        key: ['ip'],
        algorithm: 'sliding-window',
        limit: 5,
        period: '1m',
      },
      {
        id: 'admin-host',
        match: { host: '*.internal.example.com' },
        key: ['ip'],
        algorithm: 'sliding-window',
        limit: 5,
        period: '1m',
      },
      {
        id: 'combo',
        key: ['header:X-Api-Key', 'query:tenant', 'method', 'path', 'host', 'cf:country', 'cf:asn'],
        algorithm: 'token-bucket',
        limit: 5,
        period: '1m',
      },
    ],
  },
  'test'
)

const ids = (f: RequestFacts) => matchRules(ruleSet, f).map((r) => r.id)

describe('matchRules', () => {
  it('applies a rule without match to every request, in document order', () => {
    expect(ids(facts())).toEqual(['everything', 'api', 'combo'])
  })

  it.each([
    // A trailing slash makes no other path, so /api/* takes /api as it takes /api/.
    ['/api', true],
    ['/api/', true],
    ['/api/a/b/c', true],
    ['/apix', false],
    ['/API/x', true],
    ['/api.json', true],
  ])('path pattern /api/* against %s: %s', (path, expected) => {
    expect(ids(facts({ path })).includes('api')).toBe(expected)
  })

  it('checks methods and the path list', () => {
    expect(ids(facts({ method: 'DELETE' }))).not.toContain('api')
    expect(ids(facts({ method: 'POST', path: '/login' }))).toContain('login')
    expect(ids(facts({ method: 'POST', path: '/auth/x/token' }))).toContain('login')
    expect(ids(facts({ method: 'GET', path: '/login' }))).not.toContain('login')
  })

  it('counts HEAD wherever GET counts, and a method an override names', () => {
    const ids = (f: RequestFacts) => matchRules(ruleSet, f).map((r) => r.id)
    expect(ids(facts({ method: 'HEAD' }))).toContain('api')
    expect(ids(facts({ method: 'HEAD', path: '/login' }))).not.toContain('login')
    expect(ids(facts({ method: 'PUT' }))).not.toContain('api')
    expect(ids(facts({ method: 'PUT', methodOverride: 'GET' }))).toContain('api')
    expect(ids(facts({ method: 'GET', path: '/login', methodOverride: 'POST' }))).toContain('login')
  })

  it('matches host patterns case-insensitively', () => {
    expect(ids(facts({ host: 'db.internal.example.com' }))).toContain('admin-host')
    expect(ids(facts({ host: 'internal.example.com' }))).not.toContain('admin-host')
  })

  it('treats regex characters in patterns literally', () => {
    const set = parseRules(
      {
        version: 1,
        rules: [
          {
            id: 'dot',
            match: { path: '/v1.0/*' },
            key: [],
            algorithm: 'sliding-window',
            limit: 1,
            period: 1,
          },
        ],
      },
      't'
    )
    expect(matchRules(set, facts({ path: '/v1.0/x' }))).toHaveLength(1)
    expect(matchRules(set, facts({ path: '/v1x0/x' }))).toHaveLength(0)
  })
})

describe('limitKey', () => {
  const rule = (id: string) => ruleSet.rules.find((r) => r.id === id)!

  it('joins the rule id and every key part', () => {
    expect(limitKey(rule('api'), facts())).toBe('api|203.0.113.7')
    expect(limitKey(rule('everything'), facts())).toBe('everything')
    expect(limitKey(rule('combo'), facts())).toBe(
      'combo|k-123|acme|GET|%2Fapi%2Fusers%2F7|api.example.com|NL|64500'
    )
  })

  it('does not apply a rule whose key part the request lacks', () => {
    expect(limitKey(rule('api'), facts({ ip: undefined }))).toBeUndefined()
    expect(limitKey(rule('combo'), facts({ headers: new Headers() }))).toBeUndefined()
    expect(limitKey(rule('combo'), facts({ query: new URLSearchParams() }))).toBeUndefined()
    expect(limitKey(rule('combo'), facts({ country: undefined }))).toBeUndefined()
    expect(limitKey(rule('combo'), facts({ asn: undefined }))).toBeUndefined()
  })

  it('encodes values so a value cannot forge a separator', () => {
    const a = limitKey(rule('combo'), facts({ headers: new Headers({ 'x-api-key': 'a|b' }) }))
    const b = limitKey(
      rule('combo'),
      facts({
        headers: new Headers({ 'x-api-key': 'a' }),
        query: new URLSearchParams('tenant=b|acme'),
      })
    )
    expect(a).not.toBe(b)
    expect(a).toContain('a%7Cb')
  })
})

describe('matching spellings of one path or host', () => {
  const set = parseRules(
    {
      version: 1,
      rules: [
        {
          id: 'cafe',
          match: { path: '/café/*' },
          key: [],
          algorithm: 'sliding-window',
          limit: 1,
          period: 1,
        },
        {
          id: 'host',
          match: { host: 'Example.com.' },
          key: [],
          algorithm: 'sliding-window',
          limit: 1,
          period: 1,
        },
      ],
    },
    't'
  )
  const matched = (path: string, host = 'other.test') =>
    matchRules(set, facts({ path, host })).map((r) => r.id)

  it('a non-ASCII pattern matches the percent-encoded request path', async () => {
    const { requestFacts } = await import('../../src/http/request/facts')
    const request = requestFacts(new Request('https://x.test/café/menu'))
    expect(matchRules(set, request).map((r) => r.id)).toEqual(['cafe'])
    expect(matched('/caf%C3%A9/x')).toEqual(['cafe'])
  })

  it('hosts match without case or a trailing dot', () => {
    expect(matched('/x', 'example.com')).toEqual(['host'])
  })
})

describe('key parts a client could repeat', () => {
  const set = parseRules(
    {
      version: 1,
      rules: [
        { id: 'h', key: ['header:x-api-key'], algorithm: 'sliding-window', limit: 1, period: 1 },
        { id: 'q', key: ['query:api_key'], algorithm: 'sliding-window', limit: 1, period: 1 },
      ],
    },
    't'
  )

  it('keys a repeated header on its first value, so junk copies cannot mint new keys', () => {
    const headers = new Headers()
    headers.append('x-api-key', 'REAL')
    headers.append('x-api-key', 'junk1')
    expect(limitKey(set.rules[0]!, facts({ headers }))).toBe('h|REAL')
  })

  it('refuses a repeated keyed query parameter', () => {
    expect(() =>
      limitKey(set.rules[1]!, facts({ query: new URLSearchParams('api_key=junk&api_key=REAL') }))
    ).toThrowError(
      'The query parameter "api_key" appears 2 times; a rate-limit key needs exactly one value.'
    )
    expect(limitKey(set.rules[1]!, facts({ query: new URLSearchParams('api_key=REAL') }))).toBe(
      'q|REAL'
    )
  })
})
