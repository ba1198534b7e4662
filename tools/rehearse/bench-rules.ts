/**
 * @module tools/rehearse/bench-rules
 * The benchmark's two rules documents, 20 rules each, over the sample traffic's paths (see
 * `sample.ts`), each scoped to the paths it limits as a real document's are (a request meets
 * about five of them): every algorithm, keys on the address, headers, country, ASN, host and
 * path, tiers, costs, responses counted, a rule in shadow; the proposed one tightens the login
 * limit and turns the per-address API limit into a per-key one. Pure.
 */

const rule = (id: string, fields: Record<string, unknown>) => ({
  id,
  key: ['ip'],
  algorithm: 'sliding-window',
  ...fields,
})

/** The rules in force. */
export function benchCurrent(): Record<string, unknown> {
  return {
    version: 1,
    lists: { deny: { countries: ['KP'] } },
    rules: [
      rule('login-failures', {
        match: { path: '/login', methods: ['POST'] },
        key: ['header:x-account'],
        limit: 10,
        period: '5m',
        countOn: { status: [401, 403] },
      }),
      rule('login-per-ip', {
        match: { path: '/login', methods: ['POST'] },
        limit: 60,
        period: '1m',
      }),
      rule('api-per-ip', { match: { path: '/api/*' }, limit: 300, period: '1m' }),
      rule('search-burst', {
        match: { path: '/api/search', methods: ['GET'] },
        algorithm: 'token-bucket',
        limit: 5,
        period: '1s',
        burst: 20,
      }),
      rule('search-per-key', {
        match: { path: '/api/search' },
        key: ['header:x-api-key'],
        algorithm: 'token-bucket',
        limit: 20,
        period: '1s',
        burst: 60,
        tiers: { from: 'header:x-plan', limits: { pro: 100 } },
      }),
      rule('orders', {
        match: { path: '/api/orders', methods: ['POST'] },
        algorithm: 'fixed-window',
        limit: 30,
        period: '1m',
      }),
      rule('orders-per-key', {
        match: { path: '/api/orders', methods: ['POST'] },
        key: ['header:x-api-key'],
        algorithm: 'fixed-window',
        limit: 60,
        period: '1m',
        cost: { header: 'x-items', max: 50 },
      }),
      rule('items', {
        match: { path: '/api/items/*' },
        algorithm: 'gcra',
        limit: 10,
        period: '1s',
        burst: 30,
      }),
      rule('item-per-ip', {
        match: { path: '/api/items/*', methods: ['GET'] },
        key: ['ip', 'path'],
        algorithm: 'sliding-log',
        limit: 5,
        period: '10s',
      }),
      rule('static', {
        match: { path: '/static/*' },
        algorithm: 'leaky-bucket',
        limit: 50,
        period: '1s',
        burst: 100,
      }),
      rule('login-per-country', {
        match: { path: '/login', methods: ['POST'] },
        key: ['cf:country'],
        limit: 2_000,
        period: '1m',
      }),
      rule('orders-per-asn', {
        match: { path: '/api/orders', methods: ['POST'] },
        key: ['cf:asn'],
        algorithm: 'fixed-window',
        limit: 1_000,
        period: '1m',
      }),
      rule('item-failures', {
        match: { path: '/api/items/*' },
        limit: 60,
        period: '1m',
        countOn: { status: [404, '5xx'] },
      }),
      rule('search-errors', {
        match: { path: '/api/search' },
        limit: 10,
        period: '1m',
        countOn: { status: ['5xx'] },
      }),
      rule('api-everyone', {
        match: { path: '/api/*' },
        key: [],
        limit: 100_000,
        period: '1m',
        shadow: true,
      }),
      rule('admin-host', {
        match: { host: 'admin.example.com' },
        key: ['host', 'ip'],
        limit: 100,
        period: '1m',
      }),
      rule('writes', {
        match: { methods: ['PUT', 'DELETE', 'PATCH'] },
        key: ['method', 'ip'],
        limit: 10,
        period: '1m',
      }),
      rule('admin', { match: { path: '/admin/*' }, limit: 5, period: '1m' }),
      rule('orders-hourly', {
        match: { path: '/api/orders', methods: ['POST'] },
        limit: 500,
        period: '1h',
      }),
      rule('search-daily-per-key', {
        match: { path: '/api/search' },
        key: ['header:x-api-key'],
        algorithm: 'fixed-window',
        limit: 100_000,
        period: '1d',
      }),
    ],
  }
}

/** The proposed rules: login tightened, the per-address API limit now per API key. */
export function benchProposed(): Record<string, unknown> {
  const document = benchCurrent()
  const rules = document.rules as Record<string, unknown>[]
  const login = rules.findIndex((item) => item.id === 'login-failures')
  rules[login] = { ...rules[login], limit: 5, penalty: '15m' }
  const api = rules.findIndex((item) => item.id === 'api-per-ip')
  rules[api] = { ...rules[api], id: 'api-per-key', key: ['header:x-api-key'] }
  return document
}
