import { describe, expect, it } from 'vitest'
import { BadRequestError } from '../../src/errors'
import { limitKey, parseRules, planRequest, type Plan } from '../../src/rules'
import {
  compileField,
  fieldValue,
  foldHeaderName,
  foldQueryName,
  headerSpellings,
} from '../../src/rules/fields'
import type { RequestFacts } from '../../src/types'
import { documentProblems } from '../support/rules'

const facts = (fields: { headers?: [string, string][]; query?: string; claims?: object } = {}) =>
  ({
    method: 'GET',
    host: 'example.com',
    path: '/api/x',
    query: new URLSearchParams(fields.query ?? ''),
    headers: new Headers(fields.headers ?? []),
    ip: '203.0.113.7',
    ...(fields.claims ? { claims: fields.claims } : {}),
  }) as RequestFacts

describe('name folding', () => {
  it.each([
    ['X-Api-Key', 'x-api-key'],
    ['x_api_key', 'x-api-key'],
    ['X_API-KEY', 'x-api-key'],
    ['xapikey', 'xapikey'],
  ])('header %j folds to %j', (name, folded) => {
    expect(foldHeaderName(name)).toBe(folded)
  })

  it.each([
    ['api_key', 'api_key'],
    ['api.key', 'api_key'],
    ['api key', 'api_key'],
    ['api[key', 'api_key'],
    ['API_KEY', 'api_key'],
    ['  api_key', 'api_key'],
    ['api_key[]', 'api_key'],
    ['api_key[0]', 'api_key'],
    ['api.key[x][y]', 'api_key'],
    ['api-key', 'api-key'],
    ['apikey', 'apikey'],
    ['[api_key]', '_api_key]'],
  ])('query parameter %j folds to %j', (name, folded) => {
    expect(foldQueryName(name)).toBe(folded)
  })
})

describe('fieldValue', () => {
  const header = compileField('header', 'X-Api-Key')
  const query = compileField('query', 'api_key')

  it.each([
    [[['x-api-key', 'k1']], 'k1'],
    [[['x_api_key', 'k1']], 'k1'],
    [[['X_Api-Key', 'k1']], 'k1'],
    [[['x-api-key', 'k1, junk']], 'k1'],
    [
      [
        ['x-api-key', 'k1'],
        ['x_api_key', 'k1'],
      ],
      'k1',
    ],
    [[['x-api-keys', 'k1']], undefined],
    [[], undefined],
  ] as [string, string][][][])('header spellings %j read as %j', (headers, value) => {
    expect(fieldValue(header, facts({ headers: headers as [string, string][] }))).toBe(value)
  })

  it('refuses two spellings of a header with different values', () => {
    const request = facts({
      headers: [
        ['x-api-key', 'junk'],
        ['x_api_key', 'k1'],
      ],
    })
    expect(() => fieldValue(header, request)).toThrowError(BadRequestError)
    expect(() => fieldValue(header, request)).toThrowError(
      'The headers "x-api-key", "x_api_key" are read as one by common servers but carry different values; a rate-limit key needs exactly one value.'
    )
  })

  it.each([
    ['api_key=k1', 'k1'],
    ['api.key=k1', 'k1'],
    ['api+key=k1', 'k1'],
    ['api%20key=k1', 'k1'],
    ['api[key=k1', 'k1'],
    ['api_key[]=k1', 'k1'],
    ['API_KEY=k1', 'k1'],
    ['api-key=k1', undefined],
    ['other=k1', undefined],
  ])('query %j reads as %j', (search, value) => {
    expect(fieldValue(query, facts({ query: search }))).toBe(value)
  })

  it.each([
    ['api_key=a&api_key=b', 'appears 2 times;'],
    ['api_key=a&api.key=b', 'appears 2 times (as "api_key", "api.key");'],
    ['api_key=a&api+key=a', 'appears 2 times (as "api_key", "api key");'],
    ['api_key[]=a&api_key[]=b', 'appears 2 times (as "api_key[]");'],
  ])('refuses %j: a keyed parameter may appear once under all its spellings', (search, text) => {
    expect(() => fieldValue(query, facts({ query: search }))).toThrowError(
      `The query parameter "api_key" ${text} a rate-limit key needs exactly one value.`
    )
  })

  it('counts a request under its key whichever spelling it uses', () => {
    const ruleSet = parseRules(
      {
        version: 1,
        rules: [
          {
            id: 'k',
            key: ['header:x-api-key', 'query:api_key'],
            algorithm: 'gcra',
            limit: 1,
            period: 1,
          },
        ],
      },
      't'
    )
    const keys = [
      facts({ headers: [['x-api-key', 'h']], query: 'api_key=q' }),
      facts({ headers: [['x_api_key', 'h']], query: 'api.key=q' }),
      facts({ headers: [['X_API_KEY', 'h']], query: 'api[key=q' }),
    ].map((f) => limitKey(ruleSet.rules[0]!, f))
    expect(keys).toEqual(['k|h|q', 'k|h|q', 'k|h|q'])
  })

  it('reads a cost header under any spelling, and refuses two different ones', () => {
    const ruleSet = parseRules(
      {
        version: 1,
        rules: [
          {
            id: 'c',
            key: [],
            algorithm: 'gcra',
            limit: 100,
            period: 1,
            cost: { header: 'x-cost', max: 50 },
          },
        ],
      },
      't'
    )
    const costs = (headers: [string, string][]) => {
      const plan = planRequest(ruleSet, facts({ headers }))
      return plan.action === 'limit' ? plan.checks.map((c) => c.cost) : plan
    }
    expect(costs([['x_cost', '40']])).toEqual([40])
    expect(() =>
      costs([
        ['x-cost', '1'],
        ['x_cost', '40'],
      ])
    ).toThrowError(BadRequestError)
  })
})

describe('headerSpellings', () => {
  it.each([
    [[['x-http-method', 'PUT']], 'X_HTTP_Method', ['x-http-method']],
    [[['accept', '*/*']], 'x-http-method', []],
    [
      [
        ['x-http-method', 'PUT'],
        ['x_http_method', 'PUT'],
        ['accept', '*/*'],
      ],
      'X-HTTP-METHOD',
      ['x-http-method', 'x_http_method'],
    ],
    [[['x.http~method', 'PUT']], 'x-http-method', ['x.http~method']],
  ] as [[string, string][], string, string[]][])(
    'headers %j: %j is read as %j, whether every name folds to itself or not',
    (entries, name, spellings) => {
      const headers = new Headers(entries)
      expect(headerSpellings(headers, name)).toEqual(spellings)
      // Asked twice of the same headers: the index built for the first answers the second.
      expect(headerSpellings(headers, name)).toEqual(spellings)
    }
  )
})

describe('claim key parts', () => {
  const ruleSet = parseRules(
    {
      version: 1,
      jwt: { alg: 'HS256', secret: 'env:JWT_SECRET' },
      rules: [{ id: 'per-user', key: ['claim:sub'], algorithm: 'gcra', limit: 1, period: 1 }],
    },
    't'
  )
  const rule = ruleSet.rules[0]!

  it.each([
    [{ sub: 'user-1' }, 'per-user|user-1'],
    [{ sub: 42 }, 'per-user|42'],
    [{ sub: { id: 1 } }, undefined],
    [{ sub: true }, undefined],
    [{}, undefined],
    [undefined, undefined],
  ])('claims %j key as %j', (claims, key) => {
    expect(limitKey(rule, facts(claims ? { claims } : {}))).toBe(key)
  })

  it('is never read from a header: without verified claims the rule does not apply', () => {
    expect(limitKey(rule, facts({ headers: [['sub', 'user-1']] }))).toBeUndefined()
  })

  it('needs the document\'s "jwt" settings', () => {
    expect(
      documentProblems({
        rules: [{ id: 'r', key: ['claim:sub'], algorithm: 'gcra', limit: 1, period: 1 }],
      })
    ).toEqual(['rules[0].key[0]: a claim needs the document\'s "jwt" settings'])
  })
})

describe('match.headers and match.query', () => {
  const ruleSet = parseRules(
    {
      version: 1,
      rules: [
        {
          id: 'listed',
          match: { headers: { 'X-Api-Key': ['k1', 'k2'] }, query: { 'api.version': ['2'] } },
          key: [],
          algorithm: 'gcra',
          limit: 1,
          period: 1,
        },
        {
          id: 'dark',
          match: { headers: { 'x-tenant': ['t1'] } },
          key: [],
          shadow: true,
          algorithm: 'gcra',
          limit: 1,
          period: 1,
        },
      ],
    },
    't'
  )
  const ids = (p: Plan) => (p.action === 'limit' ? p.checks.map((c) => c.rule.id) : p)

  it.each([
    [{ headers: [['x-api-key', 'k1']], query: 'api_version=2' }, ['listed']],
    [{ headers: [['x_api_key', 'k2']], query: 'api.version=2' }, ['listed']],
    [{ headers: [['x-api-key', 'k3']], query: 'api_version=2' }, []],
    [{ headers: [['x-api-key', 'k1']], query: 'api_version=3' }, []],
    [{ headers: [['x-api-key', 'k1']] }, []],
    [{ headers: [['x-tenant', 't1']] }, ['dark']],
  ] as const)('%j applies %j', (request, expected) => {
    expect(ids(planRequest(ruleSet, facts(request as never)))).toEqual(expected)
  })

  it('refuses an ambiguous listed header, naming the rule; a rule in shadow only notes it', () => {
    const ambiguous = facts({
      headers: [
        ['x-api-key', 'k1'],
        ['x_api_key', 'k9'],
        ['x-tenant', 't1'],
        ['x_tenant', 't2'],
      ],
    })
    expect(() => planRequest(ruleSet, ambiguous)).toThrowError(BadRequestError)
    try {
      planRequest(ruleSet, ambiguous)
    } catch (error) {
      expect((error as BadRequestError).rule).toBe('listed')
    }
    const onlyShadow = facts({
      headers: [
        ['x-tenant', 't1'],
        ['x_tenant', 't2'],
      ],
    })
    expect(planRequest(ruleSet, onlyShadow)).toEqual({
      action: 'limit',
      checks: [],
      skipped: [{ rule: ruleSet.rules.find((r) => r.id === 'dark'), why: 'unreadable' }],
    })
  })

  it.each([
    [{ headers: { 'x-api-key': [] } }, 'rules[0].match.headers.x-api-key: must not be empty'],
    [
      { headers: { 'bad name': ['k'] } },
      'rules[0].match.headers.bad name: "bad name" is not a header name',
    ],
    [
      { headers: { 'x-api-key': 'k1' } },
      'rules[0].match.headers.x-api-key: expected a list of values, got "k1"',
    ],
    [{ query: { api_key: [1] } }, 'rules[0].match.query.api_key[0]: expected a value, got 1'],
  ])('validates match %j', (match, message) => {
    expect(
      documentProblems({
        rules: [{ id: 'r', match, key: [], algorithm: 'gcra', limit: 1, period: 1 }],
      })
    ).toEqual([message])
  })
})
