import { describe, expect, it } from 'vitest'
import { parseRules } from '../../../src/rules'
import { readableMatch, unjudged } from '../../../tools/rehearse/needs'
import type { Carried, RequestField } from '../../../tools/rehearse/records'

const carrying = (fields: RequestField[], headers: Carried['headers'] = new Set()): Carried => ({
  fields: new Set(fields),
  headers,
})
const LOGPUSH = carrying(
  ['method', 'host', 'path', 'query', 'ip', 'country', 'asn', 'status'],
  'logged'
)
const TRACE_EVENTS = carrying(['method', 'host', 'path', 'query', 'status'])

const rule = (id: string, extra: Record<string, unknown>) => ({
  id,
  key: ['ip'],
  algorithm: 'sliding-window',
  limit: 10,
  period: '1m',
  ...extra,
})
const JWT = { alg: 'HS256', secret: 'env:JWT_SECRET' }

const document = parseRules(
  {
    version: 1,
    jwt: JWT,
    lists: { deny: { countries: ['KP'] } },
    rules: [
      rule('by-ip', { match: { path: '/api/*' } }),
      rule('by-key', { key: ['header:x-api-key'] }),
      rule('by-claim', { key: ['claim:sub'] }),
      rule('login', { countOn: { status: [401] } }),
      rule('errors', { key: [], countOn: { status: ['5xx'] } }),
      { id: 'slots', key: ['ip'], algorithm: 'concurrency', limit: 2 },
      rule('by-country', { key: ['cf:country'] }),
      rule('replaced', { key: ['ip'] }),
      rule('replacing', { key: ['claim:tenant'], replaces: ['replaced'] }),
    ],
  },
  'test'
)

describe('which rules recorded traffic can judge', () => {
  it('lists each rule that reads what the traffic lacks, with the first thing it needs', () => {
    expect(unjudged(document, [LOGPUSH])).toEqual([
      { rule: 'by-claim', needs: 'claim:sub (a verified JWT)' },
      { rule: 'slots', needs: 'how long each request was in flight' },
      {
        rule: 'replaced',
        needs: 'claim:tenant (a verified JWT) (through replacing, which replaces it)',
      },
      { rule: 'replacing', needs: 'claim:tenant (a verified JWT)' },
    ])
  })

  it('takes headers Logpush logs as carried until a pass shows none of them came', () => {
    const names = (seen?: Set<string>) =>
      unjudged(document, [LOGPUSH], seen).map((item) => item.rule)
    expect(names()).not.toContain('by-key')
    expect(names(new Set(['x-api-key']))).not.toContain('by-key')
    expect(names(new Set(['x-other']))).toContain('by-key')
  })

  it('judges with what every file carries, lists included', () => {
    const found = unjudged(document, [LOGPUSH, TRACE_EVENTS])
    expect(found.find((item) => item.rule === 'by-ip')).toEqual({ rule: 'by-ip', needs: 'ip' })
    // Keyed on nothing, counting statuses: a Worker's trace events judge it.
    expect(found.map((item) => item.rule)).not.toContain('errors')
    expect(found.at(-1)).toEqual({ rule: 'lists.deny', needs: 'country' })
  })

  it('reads a match as far as the traffic can', () => {
    const match = parseRules(
      {
        version: 1,
        rules: [
          rule('m', { match: { path: '/a', methods: ['POST'], headers: { 'x-app': ['web'] } } }),
        ],
      },
      'test'
    ).rules[0]!.match
    const readable = readableMatch(match, [TRACE_EVENTS])
    expect(readable.paths).toBe(match.paths)
    expect(readable.methods).toBe(match.methods)
    expect(readable.fields).toBeUndefined()
  })
})
