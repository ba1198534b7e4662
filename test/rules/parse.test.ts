import { describe, expect, it } from 'vitest'
import bundled from '../../rules.json'
import { advertisedQuota, parseRules, parseRulesText } from '../../src/rules'
import badDuration from '../fixtures/rules/bad-duration.json'
import duplicateId from '../fixtures/rules/duplicate-id.json'
import unknownField from '../fixtures/rules/unknown-field.json'
import wrongTypes from '../fixtures/rules/wrong-types.json'
import zeroLimit from '../fixtures/rules/zero-limit.json'
import { problems } from '../support/rules'

const rule = (fields: Record<string, unknown>) => ({
  version: 1,
  rules: [{ id: 'r', key: ['ip'], algorithm: 'sliding-window', limit: 5, period: '1m', ...fields }],
})

describe('parseRules', () => {
  it('accepts the bundled rules.json', () => {
    const ruleSet = parseRules(bundled, 'rules.json')
    expect(ruleSet.rules.map((r) => r.id)).toEqual([
      'api-per-ip',
      'api-key-burst',
      'login-failures',
    ])
  })

  it("accepts the issue's example and compiles policies", () => {
    const ruleSet = parseRules(
      {
        version: 1,
        rules: [
          {
            id: 'api-per-ip',
            match: { path: '/api/*', methods: ['GET', 'POST'] },
            key: ['ip'],
            algorithm: 'sliding-window',
            limit: 100,
            period: '1m',
          },
          {
            id: 'api-key-burst',
            match: { path: '/api/*' },
            key: ['header:x-api-key'],
            algorithm: 'token-bucket',
            limit: 10,
            period: '1s',
            burst: 20,
          },
        ],
      },
      'example'
    )
    const [perIp, burst] = ruleSet.rules
    expect(perIp).toMatchObject({
      policy: { algorithm: 'sliding-window', limit: 100, periodMs: 60_000 },
      failMode: 'open',
    })
    expect(advertisedQuota(perIp!.policy)).toEqual({ quota: 100, windowSeconds: 60 })
    expect(burst).toMatchObject({
      policy: { algorithm: 'token-bucket', limit: 10, periodMs: 1_000, burst: 20 },
    })
    expect(advertisedQuota(burst!.policy)).toEqual({ quota: 20, windowSeconds: 2 })
    expect(burst?.key).toEqual([
      { kind: 'header', name: 'x-api-key', folded: 'x-api-key', aliased: true },
    ])
    expect(Object.isFrozen(ruleSet.rules)).toBe(true)
  })

  it('keeps RateLimit-Policy windows within the 15 digits of a structured-field integer', () => {
    const [r] = parseRules(
      rule({ algorithm: 'token-bucket', limit: 1, burst: 1_000_000_000, period: '365d' }),
      't'
    ).rules
    expect(advertisedQuota(r!.policy).windowSeconds).toBe(999_999_999_999_999)
  })

  it("defaults a token bucket's burst to its limit", () => {
    const [r] = parseRules(rule({ algorithm: 'token-bucket', limit: 7, period: 10 }), 't').rules
    expect(r?.policy).toEqual({ algorithm: 'token-bucket', limit: 7, periodMs: 10_000, burst: 7 })
  })

  it('gives a concurrency rule without maxWait or lease 10 s and 60 s', () => {
    const [r] = parseRules(
      { version: 1, rules: [{ id: 'c', key: ['ip'], algorithm: 'concurrency', limit: 2 }] },
      't'
    ).rules
    expect(r?.policy).toEqual({
      algorithm: 'concurrency',
      limit: 2,
      periodMs: 60_000,
      queue: 0,
      maxWaitMs: 10_000,
    })
  })

  it.each([
    ['unknown-field', unknownField, ['rules[0]: unknown field "windw"']],
    [
      'bad-duration',
      badDuration,
      [
        'rules[1].period: "1x" is not a duration (use "10s", "1m", "1h", "1d" or seconds, up to 365d)',
      ],
    ],
    ['zero-limit', zeroLimit, ['rules[0].limit: 0 must be at least 1']],
    ['duplicate-id', duplicateId, ['rules[2].id: duplicate id "same" (also rules[0])']],
    [
      'wrong-types',
      wrongTypes,
      [
        'rules[0].id: expected a rule id, got 7',
        'rules[0].match.methods: expected a list of methods, got "GET"',
        'rules[0].key: expected a list of key parts, got "ip"',
        'rules[0].limit: expected a whole number, got "100"',
        'rules[0].period: true is not a duration (use "10s", "1m", "1h", "1d" or seconds, up to 365d)',
      ],
    ],
  ])('rejects %s with the path of every bad field', (_name, input, expected) => {
    expect(problems(input)).toEqual(expected)
  })

  it.each([
    [{ limit: 1.5 }, 'rules[0].limit: 1.5 is not a whole number'],
    [{ limit: -3 }, 'rules[0].limit: -3 must be at least 1'],
    [{ limit: 2e9 }, 'rules[0].limit: 2000000000 must be at most 1000000000'],
    [
      { period: '0s' },
      'rules[0].period: "0s" is not a duration (use "10s", "1m", "1h", "1d" or seconds, up to 365d)',
    ],
    [
      { period: '400d' },
      'rules[0].period: "400d" is not a duration (use "10s", "1m", "1h", "1d" or seconds, up to 365d)',
    ],
    [
      { period: -1 },
      'rules[0].period: -1 is not a duration (use "10s", "1m", "1h", "1d" or seconds, up to 365d)',
    ],
    [
      { algorithm: 'leaky' },
      'rules[0].algorithm: "leaky" is not an algorithm (use one of "sliding-window", "token-bucket", "fixed-window", "sliding-log", "gcra", "leaky-bucket", "concurrency")',
    ],
    [{ burst: 5 }, 'rules[0]: unknown field "burst"'],
    [{ key: ['ip', 'ip'] }, 'rules[0].key: has a key part twice'],
    [
      { key: ['cookie'] },
      'rules[0].key[0]: "cookie" is not a key part (use ip, path, method, host, cf:country, cf:asn, header:<name>, query:<name>, claim:<name>)',
    ],
    [
      { key: ['header:<name>'] },
      'rules[0].key[0]: "header:<name>" is not a key part (use ip, path, method, host, cf:country, cf:asn, header:<name>, query:<name>, claim:<name>)',
    ],
    [
      { key: ['query:'] },
      'rules[0].key[0]: "query:" is not a key part (use ip, path, method, host, cf:country, cf:asn, header:<name>, query:<name>, claim:<name>)',
    ],
    [
      { key: ['header:bad name'] },
      'rules[0].key[0]: "header:bad name" is not a key part (use ip, path, method, host, cf:country, cf:asn, header:<name>, query:<name>, claim:<name>)',
    ],
    [
      { id: 'has space' },
      'rules[0].id: "has space" is not a rule id (1-64 letters, digits, "_", "-", ".", ":")',
    ],
    [
      { id: 'a|b' },
      'rules[0].id: "a|b" is not a rule id (1-64 letters, digits, "_", "-", ".", ":")',
    ],
    [{ failMode: 'maybe' }, 'rules[0].failMode: "maybe" is not "open" or "closed"'],
    [{ match: { path: 'api/*' } }, 'rules[0].match.path: "api/*" must start with "/"'],
    [
      { match: { path: '/api?x=1' } },
      'rules[0].match.path: "/api?x=1" must not contain "?", "#" or spaces (paths are matched without the query)',
    ],
    [
      { match: { methods: ['FETCH'] } },
      'rules[0].match.methods[0]: "FETCH" is not one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, CONNECT, TRACE',
    ],
    [{ match: { methods: [] } }, 'rules[0].match.methods: must not be empty'],
    [{ match: { paths: '/x' } }, 'rules[0].match: unknown field "paths"'],
  ])('rejects %j', (fields, message) => {
    expect(problems(rule(fields))).toEqual([message])
  })

  it('rejects a missing field and a document that is not one', () => {
    expect(
      problems({ version: 1, rules: [{ id: 'a', key: [], algorithm: 'token-bucket', period: 1 }] })
    ).toEqual(['rules[0].limit: is required'])
    expect(problems({ version: 1, rules: [{ id: 'a', key: [], limit: 1, period: 1 }] })).toEqual([
      'rules[0].algorithm: is required (use one of "sliding-window", "token-bucket", "fixed-window", "sliding-log", "gcra", "leaky-bucket", "concurrency")',
    ])
    expect(problems({ version: 2, rules: [] })).toEqual([
      'version: 2 is not a supported version (use 1)',
    ])
    expect(problems([])).toEqual(['(document): expected a rules document object, got []'])
    expect(problems({ version: 1, rules: ['x'] })).toEqual([
      'rules[0]: expected a rule object, got "x"',
    ])
  })

  it('names the source and every problem in the error message', () => {
    expect(() => parseRules(badDuration, 'kv:rules')).toThrowError(
      'kv:rules: invalid rules document:\n  rules[1].period: "1x" is not a duration'
    )
  })

  it('reports JSON syntax errors as rule errors', () => {
    expect(() => parseRulesText('{"version": 1,', 'kv:rules')).toThrowError(
      /kv:rules: invalid rules document:\n {2}\(document\): not valid JSON/
    )
  })

  it('upper-cases methods, adds HEAD to GET, and accepts one or many paths and hosts', () => {
    const [r, post] = parseRules(
      {
        version: 1,
        rules: [
          rule({ match: { methods: ['get'], path: ['/a', '/b/*'], host: '*.Example.com' } })
            .rules[0],
          { ...rule({}).rules[0], id: 'post', match: { methods: ['post'] } },
        ],
      },
      't'
    ).rules
    expect([...(r?.match.methods ?? [])]).toEqual(['GET', 'HEAD'])
    expect([...(post?.match.methods ?? [])]).toEqual(['POST'])
    expect(r?.match.paths).toHaveLength(2)
    expect(r?.match.hosts?.[0]?.('api.example.com')).toBe(true)
  })
})

describe('every problem of a document in one pass', () => {
  it('checks the other fields of a rule whose algorithm is unknown, and ids across rules', () => {
    const document = {
      version: 1,
      rules: [
        { id: 'a', key: ['ip'], algorithm: 'sliding-windw', limit: 0, period: '1m' },
        { id: 'b', key: ['ip'], algorithm: 'sliding-window', limit: 5, period: '1x', windw: 1 },
        { id: 'a', key: ['ip'], algorithm: 'token-bucket', limit: 5, period: '1m' },
      ],
    }
    expect(problems(document)).toEqual([
      'rules[0].algorithm: "sliding-windw" is not an algorithm (use one of "sliding-window", "token-bucket", "fixed-window", "sliding-log", "gcra", "leaky-bucket", "concurrency")',
      'rules[0].limit: 0 must be at least 1',
      'rules[1].period: "1x" is not a duration (use "10s", "1m", "1h", "1d" or seconds, up to 365d)',
      'rules[1]: unknown field "windw"',
      'rules[2].id: duplicate id "a" (also rules[0])',
    ])
  })
})
