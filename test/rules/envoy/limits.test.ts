import { describe, expect, it } from 'vitest'
import { findLimit, planEnvoy, type EnvoyEntry } from '../../../src/rules'
import { compileDomain as compile, entry as e, rateLimitOf as rl } from '../../support/envoy'

describe('Envoy descriptor lookup (the README examples)', () => {
  it('example 1: key and value select a limit', () => {
    const domains = compile('mongo_cps', [
      { key: 'database', value: 'users', ...rl(500) },
      { key: 'database', value: 'default', ...rl(500) },
    ])
    expect(findLimit(domains, 'mongo_cps', [e('database', 'users')])?.limit.requestsPerUnit).toBe(
      500
    )
    expect(findLimit(domains, 'mongo_cps', [e('database', 'other')])).toBeUndefined()
    expect(findLimit(domains, 'unknown_domain', [e('database', 'users')])).toBeUndefined()
  })

  it('example 2: nested lists, and a key without a value matches any value', () => {
    const domains = compile('messaging', [
      {
        key: 'message_type',
        value: 'marketing',
        descriptors: [{ key: 'to_number', ...rl(5, 'day') }],
      },
      { key: 'to_number', ...rl(100, 'day') },
    ])
    expect(
      findLimit(domains, 'messaging', [
        e('message_type', 'marketing'),
        e('to_number', '2061111111'),
      ])?.limit.requestsPerUnit
    ).toBe(5)
    expect(
      findLimit(domains, 'messaging', [e('to_number', '2061111111')])?.limit.requestsPerUnit
    ).toBe(100)
    // A placeholder without a limit of its own limits nothing.
    expect(findLimit(domains, 'messaging', [e('message_type', 'marketing')])).toBeUndefined()
  })

  it('example 3: the most specific match wins, key and value before key alone', () => {
    const domains = compile('edge_proxy_per_ip', [
      { key: 'remote_address', ...rl(10) },
      { key: 'remote_address', value: '50.0.0.5', ...rl(0) },
    ])
    expect(
      findLimit(domains, 'edge_proxy_per_ip', [e('remote_address', '50.0.0.1')])?.limit
        .requestsPerUnit
    ).toBe(10)
    expect(
      findLimit(domains, 'edge_proxy_per_ip', [e('remote_address', '50.0.0.5')])?.limit
        .requestsPerUnit
    ).toBe(0)
  })

  it('example 4: the request must be as deep as the limit', () => {
    const flat = compile('example4', [{ key: 'key', value: 'value', ...rl(300) }])
    expect(
      findLimit(flat, 'example4', [e('key', 'value'), e('subkey', 'subvalue')])
    ).toBeUndefined()
    const nested = compile('example4', [
      { key: 'key', value: 'value', descriptors: [{ key: 'subkey', ...rl(300) }] },
    ])
    expect(
      findLimit(nested, 'example4', [e('key', 'value'), e('subkey', 'subvalue')])?.limit
        .requestsPerUnit
    ).toBe(300)
    expect(findLimit(nested, 'example4', [e('key', 'value')])).toBeUndefined()
  })

  it('example 5 and 7: unlimited, and replaces by name', () => {
    const domains = compile('example7', [
      { key: 'ldap', rate_limit: { unlimited: true } },
      {
        key: 'key_1',
        value: 'value_1',
        descriptors: [
          { key: 'user', value: 'bkthomps', ...rl(5, 'second', { name: 'specific_limit' }) },
        ],
      },
      {
        key: 'key_2',
        value: 'value_2',
        descriptors: [
          {
            key: 'user',
            value: 'bkthomps',
            ...rl(10, 'second', { replaces: [{ name: 'specific_limit' }] }),
          },
        ],
      },
    ])
    const request = (...descriptors: EnvoyEntry[][]) => ({
      domain: 'example7',
      descriptors: descriptors.map((entries) => ({ entries, hits: 1 })),
    })
    const both = planEnvoy(
      domains,
      request(
        [e('key_1', 'value_1'), e('user', 'bkthomps')],
        [e('key_2', 'value_2'), e('user', 'bkthomps')]
      )
    )
    expect(both.map((s) => (s.kind === 'check' ? s.check.limit.requestsPerUnit : s.kind))).toEqual([
      'none',
      10,
    ])
    const alone = planEnvoy(domains, request([e('key_1', 'value_1'), e('user', 'bkthomps')]))
    expect(alone.map((s) => (s.kind === 'check' ? s.check.limit.requestsPerUnit : s.kind))).toEqual(
      [5]
    )
    expect(planEnvoy(domains, request([e('ldap', 'x')]))[0]).toEqual({ kind: 'unlimited' })
  })

  it('example 6: shadow_mode is carried with the limit', () => {
    const domains = compile('example6', [
      {
        key: 'service',
        descriptors: [
          { key: 'user', value: 'user-a', shadow_mode: true, ...rl(10) },
          { key: 'user', value: 'user-b', ...rl(20) },
        ],
      },
    ])
    expect(
      findLimit(domains, 'example6', [e('service', 'auth'), e('user', 'user-a')])?.limit.shadow
    ).toBe(true)
    expect(
      findLimit(domains, 'example6', [e('service', 'auth'), e('user', 'user-b')])?.limit.shadow
    ).toBe(false)
  })

  it('example 9: wildcards at the end, in the middle, and several', () => {
    const domains = compile('example9', [
      { key: 'key1', value: 'value*', ...rl(20, 'minute') },
      { key: 'path', value: '/api/*/action', ...rl(21, 'minute') },
      { key: 'route', value: '/api/*/resource/*/action', ...rl(22, 'minute') },
    ])
    const perUnit = (entry: EnvoyEntry) =>
      findLimit(domains, 'example9', [entry])?.limit.requestsPerUnit
    expect(perUnit(e('key1', 'valueXYZ'))).toBe(20)
    expect(perUnit(e('key1', 'other'))).toBeUndefined()
    expect(perUnit(e('path', '/api/123/action'))).toBe(21)
    expect(perUnit(e('path', '/api/123/other'))).toBeUndefined()
    expect(perUnit(e('route', '/api/v1/resource/123/action'))).toBe(22)
  })

  it('example 11: share_threshold makes wildcard matches share one counter', () => {
    const domains = compile('example11', [
      { key: 'files', value: 'files/*', share_threshold: true, ...rl(10, 'hour') },
      { key: 'files_no_share', value: 'files_no_share/*', ...rl(10, 'hour') },
    ])
    const key = (entries: EnvoyEntry[]) => {
      const [slot] = planEnvoy(domains, {
        domain: 'example11',
        descriptors: [{ entries, hits: 1 }],
      })
      return slot?.kind === 'check' ? slot.check.key : undefined
    }
    expect(key([e('files', 'files/a.pdf')])).toBe(key([e('files', 'files/b.csv')]))
    expect(key([e('files', 'files/a.pdf')])).toBe('envoy|example11|files=files%2F*')
    expect(key([e('files_no_share', 'files_no_share/a.pdf')])).not.toBe(
      key([e('files_no_share', 'files_no_share/b.csv')])
    )
  })

  it('a limit in the request overrides the configuration', () => {
    const domains = compile('d', [{ key: 'k', ...rl(5) }])
    const found = findLimit(domains, 'd', [e('k', 'v')], { requestsPerUnit: 42, unit: 'HOUR' })
    expect(found?.limit).toMatchObject({ requestsPerUnit: 42, unit: 'HOUR', shadow: false })
  })

  it('names an override counter apart unless the configured limit is a fixed window in its unit', () => {
    const domains = compile('d', [
      { key: 'a', ...rl(5, 'minute') },
      { key: 'b', ...rl(5, 'minute', { algorithm: 'token-bucket' }) },
    ])
    const key = (k: string, override?: { requestsPerUnit: number; unit: 'MINUTE' | 'HOUR' }) => {
      const [slot] = planEnvoy(domains, {
        domain: 'd',
        descriptors: [{ entries: [e(k, '1')], hits: 1, ...(override && { override }) }],
      })
      return slot?.kind === 'check' ? slot.check.key : undefined
    }
    expect(key('a')).toBe('envoy|d|a=1')
    expect(key('a', { requestsPerUnit: 9, unit: 'MINUTE' })).toBe('envoy|d|a=1')
    expect(key('a', { requestsPerUnit: 9, unit: 'HOUR' })).toBe('envoy|d|a=1|unit:HOUR')
    expect(key('b', { requestsPerUnit: 9, unit: 'MINUTE' })).toBe('envoy|d|b=1|unit:MINUTE')
    expect(key('c', { requestsPerUnit: 9, unit: 'MINUTE' })).toBe('envoy|d|c=1|unit:MINUTE')
    // An entry cannot spell the suffix: its `=` and `:` are always there or encoded.
    expect(key('unit', { requestsPerUnit: 9, unit: 'HOUR' })).toBe('envoy|d|unit=1|unit:HOUR')
  })
})
