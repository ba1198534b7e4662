import { describe, expect, it } from 'vitest'
import { compileEnvoy } from '../../../src/rules'

const fromFile = (...configs: unknown[]) =>
  compileEnvoy(configs, (i) => ({ file: `config${i}.yaml` })).problems

const limited = (fields: Record<string, unknown> = {}) => ({
  unit: 'second',
  requests_per_unit: 5,
  ...fields,
})

describe('Envoy configurations are validated as envoyproxy/ratelimit validates them', () => {
  it('accepts the README examples', () => {
    const messaging = {
      domain: 'messaging',
      descriptors: [
        {
          key: 'message_type',
          value: 'marketing',
          descriptors: [{ key: 'to_number', rate_limit: { unit: 'day', requests_per_unit: 5 } }],
        },
        { key: 'to_number', rate_limit: { unit: 'day', requests_per_unit: 100 } },
      ],
    }
    const internal = {
      domain: 'internal',
      descriptors: [
        { key: 'ldap', rate_limit: { unlimited: true } },
        { key: 'azure', rate_limit: { unit: 'minute', requests_per_unit: 100 } },
        {
          key: 'files',
          value: 'files/*',
          share_threshold: true,
          rate_limit: { unit: 'hour', requests_per_unit: 10 },
        },
        {
          key: 'x',
          detailed_metric: true,
          value_to_metric: true,
          metadata: { anything: [1, { a: 2 }] },
          rate_limit: limited(),
        },
      ],
    }
    const result = compileEnvoy([messaging, internal], (i) => ({ file: `c${i}.yaml` }))
    expect(result.problems).toEqual([])
    expect([...result.domains.keys()]).toEqual(['messaging', 'internal'])
  })

  it.each([
    [
      { domain: 'd', descriptors: [{ key: 'k', ratelimit: limited() }] },
      "config0.yaml: descriptors[0]: config error, unknown key 'ratelimit'",
    ],
    [
      { domain: 'd', descriptors: [{ key: 'k', rate_limit: limited({ unit: 'foo' }) }] },
      "config0.yaml: descriptors[0] (d.k): invalid rate limit unit 'foo'",
    ],
    [
      { domain: 'd', descriptors: [{ key: 'k', rate_limit: { unlimited: true, unit: 'second' } }] },
      'config0.yaml: descriptors[0] (d.k): should not specify rate limit unit when unlimited',
    ],
    [
      { domain: 'd', descriptors: [{ value: 'v', rate_limit: limited() }] },
      'config0.yaml: descriptors[0]: descriptor has empty key',
    ],
    [
      {
        domain: 'd',
        descriptors: [
          { key: 'k', value: 'v' },
          { key: 'k', value: 'v' },
        ],
      },
      "config0.yaml: descriptors[1] (d.k_v): duplicate descriptor composite key 'd.k_v'",
    ],
    [{ descriptors: [] }, 'config0.yaml: config file cannot have empty domain'],
    [
      {
        domain: 'd',
        descriptors: [{ key: 'k', rate_limit: limited({ name: 'a', replaces: [{ name: '' }] }) }],
      },
      'config0.yaml: descriptors[0] (d.k): should not have an empty replaces entry',
    ],
    [
      {
        domain: 'd',
        descriptors: [{ key: 'k', rate_limit: limited({ name: 'a', replaces: [{ name: 'a' }] }) }],
      },
      'config0.yaml: descriptors[0] (d.k): replaces should not contain name of same descriptor',
    ],
    [
      { domain: 'd', descriptors: [{ key: 'k', value: 'v', share_threshold: true }] },
      "config0.yaml: descriptors[0] (d.k_v): share_threshold can only be used with wildcard values (containing '*'), but found key 'k_v'",
    ],
    [
      { domain: 'd', descriptors: ['k'] },
      'config0.yaml: descriptors[0]: config error, yaml file contains list of type other than map: "k"',
    ],
    [
      { domain: 'd', descriptors: [{ key: 'k', rate_limit: limited({ requests_per_unit: -1 }) }] },
      'config0.yaml: descriptors[0] (d.k): error loading config file: requests_per_unit must be a whole number from 0 to 4294967295, not -1',
    ],
    [
      { domain: 'd', descriptors: [{ key: 'k', rate_limit: limited({ algorithm: 'leaky' }) }] },
      'config0.yaml: descriptors[0] (d.k): algorithm must be one of fixed-window, sliding-window, token-bucket, not "leaky"',
    ],
  ])('%j', (config, message) => {
    expect(fromFile(config)).toEqual([message])
  })

  it('names nested descriptors by their place and composite key', () => {
    const config = {
      domain: 'messaging',
      descriptors: [
        { key: 'a' },
        {
          key: 'message_type',
          value: 'marketing',
          descriptors: [
            { key: 'to_number', rate_limit: { unit: 'fortnight', requests_per_unit: 5 } },
          ],
        },
      ],
    }
    expect(fromFile(config)).toEqual([
      "config0.yaml: descriptors[1].descriptors[0] (messaging.message_type_marketing.to_number): invalid rate limit unit 'fortnight'",
    ])
  })

  it('rejects a domain defined twice', () => {
    expect(fromFile({ domain: 'd', descriptors: [] }, { domain: 'd', descriptors: [] })).toEqual([
      "config1.yaml: duplicate domain 'd' in config file",
    ])
  })

  it('reports every problem in the rules document under its domains path', () => {
    const problems = compileEnvoy(
      [{ domain: 'd', descriptors: [{ key: 'k', rate_limit: limited({ unit: 'x' }) }] }],
      (i) => ({ path: `domains[${i}]` })
    ).problems
    expect(problems).toEqual(["domains[0].descriptors[0] (d.k): invalid rate limit unit 'x'"])
  })
})
