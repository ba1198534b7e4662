/**
 * The rehearsal decides as the Worker does: the same 10,000 requests go through the Worker in
 * workerd (its middleware, its Durable Objects, the demo origin answering 200, 401 or the status
 * a request asks for) on a clock set to each request's time, and through the rehearsal as the
 * Logpush lines they make, and get the same decision, request by request.
 */
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp } from '../../../src/app'
import { DEMO_PASSWORD } from '../../../src/http/request/demo-origin'
import { parseRules } from '../../../src/rules'
import { mulberry32 } from '../../../tools/simulate/profile'
import type { Outcome } from '../../../tools/rehearse/engine'
import { rehearse } from '../../../tools/rehearse/rehearse'
import { freezeClock } from '../../support/clock'
import { quietConsole } from '../../support/flaky-leased'
import { textFile } from '../../support/traffic'

/** Every feature a log can judge, on few clients, so that limits bind often. */
const RULES = {
  version: 1,
  lists: { deny: { countries: ['KP'] }, allow: { ips: ['198.51.100.0/24'] } },
  rules: [
    {
      id: 'per-ip',
      match: { path: '/api/*' },
      key: ['ip'],
      algorithm: 'sliding-window',
      limit: 30,
      period: '10s',
    },
    {
      id: 'per-key',
      match: { path: '/api/*' },
      key: ['header:x-api-key'],
      algorithm: 'token-bucket',
      limit: 2,
      period: '1s',
      burst: 6,
      tiers: { from: 'header:x-plan', limits: { pro: 8 } },
    },
    {
      id: 'search',
      match: { path: '/api/search', methods: ['GET'] },
      key: ['ip'],
      algorithm: 'fixed-window',
      limit: 12,
      period: '5s',
      cost: { header: 'x-cost', max: 5 },
    },
    {
      id: 'orders',
      match: { path: '/api/orders', methods: ['POST'] },
      key: ['ip'],
      algorithm: 'gcra',
      limit: 2,
      period: '1s',
      burst: 3,
    },
    {
      id: 'login',
      match: { path: '/login', methods: ['POST'] },
      key: ['header:x-account'],
      algorithm: 'sliding-window',
      limit: 3,
      period: '1m',
      penalty: '2m',
      countOn: { status: [401] },
    },
    {
      id: 'errors',
      match: { path: '/api/*' },
      key: ['ip'],
      algorithm: 'sliding-window',
      limit: 4,
      period: '30s',
      countOn: { status: ['5xx'] },
    },
    {
      id: 'per-country',
      key: ['cf:country'],
      algorithm: 'leaky-bucket',
      limit: 40,
      period: '1s',
      burst: 60,
    },
    {
      id: 'per-asn',
      match: { path: '/static/*' },
      key: ['cf:asn', 'path'],
      algorithm: 'sliding-log',
      limit: 5,
      period: '2s',
    },
    {
      id: 'reports',
      match: { path: '/api/reports' },
      key: ['ip'],
      algorithm: 'fixed-window',
      limit: 2,
      period: '10s',
      action: 'degrade',
      degradeHeader: true,
    },
    { id: 'everyone', key: [], algorithm: 'sliding-window', limit: 60, period: '1s', shadow: true },
  ],
}

const START_MS = Date.UTC(2026, 10, 2, 9, 0, 0)

interface Sent {
  atMs: number
  method: string
  url: string
  headers: Record<string, string>
  ip: string
  country: string
  asn: number
}

/** 10,000 requests over about 10 minutes, from 40 addresses (8 of them in one IPv6 /64). */
function requests(count: number): Sent[] {
  const pick = mulberry32(45)
  const of = <T>(items: readonly T[]) => items[Math.floor(pick() * items.length)]!
  const addresses = [
    ...Array.from({ length: 30 }, (_, i) => `203.0.113.${i + 1}`),
    ...Array.from({ length: 8 }, (_, i) => `2001:db8:1:2::${i + 1}`),
    '198.51.100.7',
    '::ffff:203.0.113.1',
  ]
  const countries: [string, number][] = [
    ['DE', 3320],
    ['US', 7922],
    ['NL', 1136],
    ['KP', 131279],
  ]
  const sent: Sent[] = []
  let atMs = START_MS
  for (let i = 0; i < count; i++) {
    atMs += Math.floor(-Math.log(1 - pick()) * 60) // about 16 a second, in bursts
    const [country, asn] = pick() < 0.01 ? countries[3]! : of(countries.slice(0, 3))
    const headers: Record<string, string> = {}
    if (pick() < 0.7) headers['x-api-key'] = `key-${Math.floor(pick() * 12)}`
    if (pick() < 0.2) headers['x-plan'] = of(['pro', 'free', 'gold'])
    let method = 'GET'
    let path: string
    const roll = pick()
    if (roll < 0.15) {
      method = 'POST'
      path = '/login'
      headers['x-account'] = `user-${Math.floor(pick() * 6)}`
      headers['x-password'] = pick() < 0.5 ? DEMO_PASSWORD : 'wrong'
    } else if (roll < 0.35) {
      path =
        of(['/api/search', '/API/search', '/api/search.json', '/api/x/../search']) + `?q=${i % 7}`
      if (pick() < 0.4) headers['x-cost'] = of(['1', '3', '5', '9', 'abc'])
    } else if (roll < 0.45) {
      method = of(['POST', 'GET'])
      path = '/api/orders'
      if (method === 'GET' && pick() < 0.5) headers['x-http-method-override'] = 'POST'
    } else if (roll < 0.52) path = '/api/reports'
    else if (roll < 0.62) path = `/static/app.${Math.floor(pick() * 3)}.js`
    else path = `/api/items/${Math.floor(pick() * 50)}${pick() < 0.08 ? '?status=503' : ''}`
    // Now and then a key sent twice, spelled two ways: ambiguous, refused with 400.
    if (pick() < 0.005) headers['x_api_key'] = 'another'
    sent.push({
      atMs,
      method,
      url: `https://api.example.com${path}`,
      headers,
      ip: of(addresses),
      country,
      asn,
    })
  }
  return sent
}

/** What the Worker's answer says was decided. */
function outcomeOf(response: Response): Outcome {
  if (response.headers.has('X-RateLimit-Degraded')) return 'degraded'
  if (response.status === 429) return 'denied'
  if (response.status === 403) return 'forbidden'
  if (response.status === 400) return 'bad-request'
  return 'allowed'
}

/** The Logpush line of a request and the Worker's answer to it, headers as custom fields. */
function logpushLine(request: Sent, status: number): string {
  const url = new URL(request.url)
  const { 'x-password': _, ...logged } = request.headers
  return JSON.stringify({
    ClientASN: request.asn,
    ClientCountry: request.country.toLowerCase(),
    ClientIP: request.ip,
    ClientRequestHost: url.host,
    ClientRequestMethod: request.method,
    ClientRequestURI: url.pathname + url.search,
    EdgeResponseStatus: status,
    EdgeStartTimestamp: new Date(request.atMs).toISOString(),
    RequestHeaders: logged,
  })
}

afterEach(() => vi.useRealTimers())
// The Worker logs its degraded requests, deny-list matches and would-be denials: thousands here.
quietConsole()

describe('the rehearsal against the Worker', () => {
  it('decides 10,000 requests as the Worker does, every one', { timeout: 300_000 }, async () => {
    const sent = requests(10_000)
    // Rule ids of their own: no other test's objects or isolate state share a key.
    const ruleSet = parseRules(RULES, 'agreement')
    const app = createApp({ rules: ruleSet, wait: () => Promise.resolve() })
    freezeClock()
    const worker: Outcome[] = []
    const lines: string[] = []
    for (const request of sent) {
      vi.setSystemTime(request.atMs)
      const ctx = createExecutionContext()
      const response = await app.fetch(
        new Request(request.url, {
          method: request.method,
          headers: { ...request.headers, 'cf-connecting-ip': request.ip },
          cf: { country: request.country, asn: request.asn },
        }),
        { ...env, ORIGIN: 'demo' },
        ctx
      )
      await response.arrayBuffer()
      await waitOnExecutionContext(ctx)
      worker.push(outcomeOf(response))
      lines.push(logpushLine(request, response.status))
    }
    vi.useRealTimers()

    const rehearsed: Outcome[] = []
    const report = await rehearse({
      current: { name: 'agreement', ruleSet },
      proposed: { name: 'agreement', ruleSet },
      traffic: [textFile('worker.ndjson', `${lines.join('\n')}\n`)],
      reorderMs: 0,
      skipBad: false,
      methodOverride: 'count',
      onDecision: (record, current) => {
        rehearsed[record.line - 1] = current.outcome
      },
    })
    const differing = worker.flatMap((outcome, i) =>
      rehearsed[i] === outcome
        ? []
        : [`#${i} ${sent[i]!.method} ${sent[i]!.url}: worker ${outcome}, rehearsal ${rehearsed[i]}`]
    )
    expect(differing.slice(0, 10)).toEqual([])
    expect(rehearsed).toHaveLength(10_000)
    // Not a vacuous agreement: every kind of answer came up, and limits bound often.
    const counts = Object.fromEntries(
      ['allowed', 'denied', 'degraded', 'forbidden', 'bad-request'].map((kind) => [
        kind,
        worker.filter((o) => o === kind).length,
      ])
    )
    expect(counts.denied).toBeGreaterThan(1_000)
    for (const kind of ['degraded', 'forbidden', 'bad-request'])
      expect(counts[kind]).toBeGreaterThan(10)
    expect(report.unjudged).toEqual([])
    expect(report.requests.newlyDenied + report.requests.newlyAllowed).toBe(0)
    expect(report.rules.every((row) => row.matched > 0)).toBe(true)
  })
})
