import { describe, expect, it } from 'vitest'
import {
  dotenvNames,
  preflightFindings,
  type PreflightInput,
  type WranglerSettings,
} from '../../../tools/cli/preflight-checks'

const NAMESPACE = '0f2ac74b498b48028cb68387c421e279'
const ROUTE = { pattern: 'api.shop.test/*', zone_name: 'shop.test' }
const VALID_RULES = JSON.stringify({
  version: 1,
  rules: [{ id: 'a', key: ['ip'], algorithm: 'sliding-window', limit: 5, period: '1m' }],
})

/** The limiter deployed on a zone route in front of the zone's origin: nothing to say. */
const ready: WranglerSettings = {
  routes: [ROUTE],
  workers_dev: false,
  vars: { ORIGIN: '' },
  kv_namespaces: [{ binding: 'RULES', id: NAMESPACE }],
}

function findings(config: WranglerSettings, more: Partial<PreflightInput> = {}) {
  return preflightFindings({
    config,
    configFile: 'wrangler.toml',
    localSecrets: { file: '.dev.vars', names: new Set() },
    rules: { file: 'rules.json', text: VALID_RULES },
    ...more,
  })
}

/** The findings' severity and the start of what they say. */
function said(config: WranglerSettings, more: Partial<PreflightInput> = {}): string[] {
  return findings(config, more).map(({ severity, what }) => `${severity}: ${what}`)
}

describe('preflight', () => {
  it('finds nothing wrong with a zone route in front of the origin', () => {
    expect(said(ready)).toEqual([])
  })

  it('gives every finding a fix', () => {
    const all = findings({ ...ready, vars: { ORIGIN: 'x', ADMIN_PREFIX: '/admin' } })
    expect(all.length).toBeGreaterThan(1)
    for (const finding of all) expect(finding.fix).toMatch(/\S/)
  })

  it.each(['<your-namespace-id>', 'xxxxxxxx', '00000000000000000000000000000000', 'REPLACE_ME'])(
    'names the placeholder KV namespace id %j, and how to get a real one',
    (id) => {
      const [found] = findings({ ...ready, kv_namespaces: [{ binding: 'RULES', id }] })
      expect(found?.severity).toBe('error')
      expect(found?.what).toBe(
        `the KV namespace bound as RULES has id = ${JSON.stringify(id)}, a placeholder`
      )
      expect(found?.fix).toContain('npx wrangler kv namespace create RULES')
    }
  )

  it('takes a namespace without an id (wrangler deploy creates it)', () => {
    expect(said({ ...ready, kv_namespaces: [{ binding: 'RULES' }] })).toEqual([])
  })

  it('refuses workers_dev with an empty ORIGIN: the Worker would call itself', () => {
    const onWorkersDev = { vars: { ORIGIN: '' }, workers_dev: true }
    expect(said(onWorkersDev)).toEqual([
      'error: workers_dev is on and ORIGIN is empty: no origin stands behind the Worker there; allowed requests would go back to the Worker itself',
    ])
    // wrangler's default: a Worker without routes is on workers.dev.
    expect(said({ vars: { ORIGIN: '' } })).toEqual(said(onWorkersDev))
  })

  it('refuses a custom domain with an empty ORIGIN', () => {
    const routes = [{ pattern: 'api.shop.test', custom_domain: true }]
    expect(said({ ...ready, routes })[0]).toMatch(
      /^error: api\.shop\.test is a custom domain and ORIGIN is empty/
    )
  })

  it.each([
    ['demo', 'to the bundled demo origin'],
    ['https://backend.shop.test', 'to https://backend.shop.test'],
  ])('refuses zone routes with ORIGIN = %j, which contradicts them', (origin, where) => {
    expect(said({ ...ready, vars: { ORIGIN: origin } })).toEqual([
      `error: the route "api.shop.test/*" puts the Worker in front of the origin your zone's DNS points at, and ORIGIN = "${origin}" sends every allowed request ${where} instead`,
    ])
  })

  it('refuses an ORIGIN that is no URL', () => {
    expect(said({ workers_dev: true, vars: { ORIGIN: 'origin.shop.test' } })).toEqual([
      'error: ORIGIN = "origin.shop.test" is not an http(s) URL: every allowed request would get a 502',
    ])
  })

  it('notes the demo origin on workers.dev, a try-out', () => {
    expect(said({ workers_dev: true, vars: { ORIGIN: 'demo' } })).toEqual([
      'note: ORIGIN = "demo": the deployed Worker answers from the bundled demo origin, not from yours',
    ])
  })

  it('leaves ORIGIN alone in a Worker of its own (the library path)', () => {
    expect(said({ kv_namespaces: [{ binding: 'RULES' }] })).toEqual([])
  })

  it('refuses a Worker reachable nowhere', () => {
    expect(said({ workers_dev: false, vars: { ORIGIN: 'https://o.shop.test' } })).toEqual([
      'error: workers_dev is off and there are no routes: the deployed Worker would be reachable nowhere',
    ])
  })

  it('lists every error of a rules document that does not validate, with its hint', () => {
    const text = JSON.stringify({
      version: 1,
      rules: [
        {
          id: 'a',
          key: ['ip'],
          algorithm: 'sliding-window',
          limit: 0,
          period: '1m',
          method: ['POST'],
        },
      ],
    })
    expect(said(ready, { rules: { file: 'rules.json', text } })).toEqual([
      'error: rules.json: rules[0].limit: 0 must be at least 1',
      'error: rules.json: rules[0]: unknown field "method": did you mean "methods", under "match"?',
    ])
    expect(said(ready, { rules: { file: 'rules.json', text: '{"version":' } })[0]).toMatch(
      /^error: rules\.json: \(document\): not valid JSON/
    )
  })

  describe('the admin API asked for with no token', () => {
    const admin = { ...ready, vars: { ORIGIN: '', ADMIN_PREFIX: '/__ratelimit' } }

    it('is refused', () => {
      expect(said(admin)).toEqual([
        'error: ADMIN_PREFIX = "/__ratelimit" asks for the admin API, but ADMIN_TOKEN is set neither in .dev.vars nor named under [secrets] required: every admin route would answer 404',
      ])
    })

    it('passes with the token in .dev.vars, or named as a secret', () => {
      const local = { localSecrets: { file: '.dev.vars', names: new Set(['ADMIN_TOKEN']) } }
      expect(said(admin, local)).toEqual([])
      expect(said({ ...admin, secrets: { required: ['ADMIN_TOKEN'] } })).toEqual([])
    })
  })

  it('refuses Envoy domains with no DECISION_TOKEN, and takes them with one', () => {
    const text = JSON.stringify({
      version: 1,
      rules: [],
      domains: [
        {
          domain: 'd',
          descriptors: [{ key: 'k', rate_limit: { unit: 'second', requests_per_unit: 1 } }],
        },
      ],
    })
    expect(said(ready, { rules: { file: 'rules.json', text } })[0]).toMatch(
      /^error: rules\.json has Envoy "domains", but DECISION_TOKEN is set neither/
    )
    expect(
      said(
        { ...ready, secrets: { required: ['DECISION_TOKEN'] } },
        { rules: { file: 'rules.json', text } }
      )
    ).toEqual([])
  })

  it('reads an environment as wrangler does: its own vars and namespaces, routes inherited', () => {
    const config: WranglerSettings = {
      routes: [ROUTE],
      workers_dev: false,
      vars: { ORIGIN: '' },
      env: {
        staging: { vars: { ORIGIN: 'demo' }, kv_namespaces: [{ binding: 'RULES', id: 'x' }] },
      },
    }
    expect(said(config)).toEqual([])
    expect(said(config, { env: 'staging' }).map((line) => line.slice(0, 40))).toEqual([
      'error: the KV namespace bound as RULES h',
      'error: the route "api.shop.test/*" puts ',
    ])
  })

  it('reads the names a .dev.vars sets', () => {
    expect(
      dotenvNames('# a comment\nADMIN_TOKEN=abc\nexport KEY_HASH_SECRET = "x"\n\nnot a line')
    ).toEqual(new Set(['ADMIN_TOKEN', 'KEY_HASH_SECRET']))
  })
})
