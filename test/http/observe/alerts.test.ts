import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp } from '../../../src/app'
import {
  ALERTS_PER_RULE_PER_MINUTE,
  MAX_WEBHOOKS_IN_FLIGHT,
} from '../../../src/http/observe/alerts'
import { freezeClock } from '../../support/clock'
import { client, rules } from '../../support/http'

/** The webhook receiver of the test origin (test/support/origin-server.ts). */
const hook = (name: string, query = '') => `${env.TEST_ORIGIN}/__webhook/${name}${query}`
const received = async (name: string) =>
  (await (await fetch(hook(name))).json()) as Record<string, unknown>[]

// Token buckets refilling over a day: the near-limit window is the day, no boundary in a test.
const nearLimitRule = (id: string) => ({
  id,
  key: ['ip'],
  algorithm: 'token-bucket',
  limit: 4,
  period: '24h',
  nearLimit: 0.5,
})

describe('near-limit and limited-burst alerts', () => {
  it('POSTs a near-limit event once per key and window', async () => {
    const send = client(
      { rules: rules(nearLimitRule('nl-once')) },
      { ALERT_WEBHOOK_URL: hook('nl-once') }
    )
    const statuses = []
    for (let n = 0; n < 5; n++) statuses.push((await send('/a', { ip: '192.0.2.1' })).status)
    statuses.push((await send('/a', { ip: '192.0.2.2' })).status)
    expect(statuses).toEqual([200, 200, 200, 200, 429, 200])
    const bodies = await received('nl-once')
    expect(bodies).toHaveLength(1)
    expect(bodies[0]).toMatchObject({
      event: 'near-limit',
      rule: 'nl-once',
      key: 'nl-once|192.0.2.1',
      limit: 4,
      remaining: 2,
      window: '1d',
    })
    for (let n = 0; n < 2; n++) await send('/a', { ip: '192.0.2.2' })
    expect((await received('nl-once')).map((b) => b.key)).toEqual([
      'nl-once|192.0.2.1',
      'nl-once|192.0.2.2',
    ])
  })

  it('answers without waiting for a webhook that hangs, with the same decisions', async () => {
    const app = createApp({ rules: rules(nearLimitRule('nl-hangs')) })
    const vars = { ...env, ORIGIN: 'demo', ALERT_WEBHOOK_URL: hook('nl-hangs', '?hang=1') }
    const contexts: ExecutionContext[] = []
    const statuses = []
    for (let n = 0; n < 5; n++) {
      const ctx = createExecutionContext()
      contexts.push(ctx)
      const request = new Request('https://example.com/a', {
        headers: { 'cf-connecting-ip': '192.0.2.9' },
      })
      // The response is here while the webhook still holds its POST unanswered.
      statuses.push((await app.fetch(request, vars, ctx)).status)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429])
    await fetch(hook('nl-hangs', '/release'), { method: 'POST' })
    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)))
    expect(await received('nl-hangs')).toHaveLength(1)
  })

  it('keeps deciding when the webhook fails', async () => {
    const send = client(
      { rules: rules(nearLimitRule('nl-fails')) },
      { ALERT_WEBHOOK_URL: hook('nl-fails', '?status=500') }
    )
    const statuses = []
    for (let n = 0; n < 5; n++) statuses.push((await send('/a', { ip: '192.0.2.3' })).status)
    expect(statuses).toEqual([200, 200, 200, 200, 429])
    expect(await received('nl-fails')).toHaveLength(1)
  })

  it('POSTs a limited-burst event once when more than LIMITED_BURST_KEYS keys of a rule are limited in a minute', async () => {
    const send = client(
      {
        rules: rules({
          id: 'burst',
          key: ['ip'],
          algorithm: 'token-bucket',
          limit: 1,
          period: '24h',
        }),
      },
      { ALERT_WEBHOOK_URL: hook('burst'), LIMITED_BURST_KEYS: '2' }
    )
    const statuses = []
    for (const ip of ['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4'])
      for (let n = 0; n < 2; n++) statuses.push((await send('/a', { ip })).status)
    expect(statuses).toEqual([200, 429, 200, 429, 200, 429, 200, 429])
    const bodies = await received('burst')
    expect(bodies).toEqual([
      { event: 'limited-burst', rule: 'burst', keys: 3, minute: expect.any(String) },
    ])
  })
})

/** A near-limit rule keyed on a header the client chooses: every fresh value raises an event. */
const perUser = (id: string) => ({
  id,
  match: { path: `/${id}` },
  key: ['header:x-user'],
  showKeys: true,
  algorithm: 'token-bucket',
  limit: 2,
  period: '24h',
  nearLimit: 0.5,
})

/** Sends without waiting for the request's background work (a webhook that hangs holds it). */
function sender(ruleSet: ReturnType<typeof rules>, webhook: string) {
  const app = createApp({ rules: ruleSet })
  const vars = { ...env, ORIGIN: 'demo', ALERT_WEBHOOK_URL: webhook }
  const contexts: ExecutionContext[] = []
  const send = async (path: string, user: string) => {
    const ctx = createExecutionContext()
    contexts.push(ctx)
    const request = new Request(`https://example.com${path}`, { headers: { 'x-user': user } })
    return (await app.fetch(request, vars, ctx)).status
  }
  return { send, settled: () => Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx))) }
}

/** Fresh keys sent in a minute: four times the budget. */
const FLOOD = 4 * ALERTS_PER_RULE_PER_MINUTE

describe('the alert budget', () => {
  afterEach(() => {
    vi.useRealTimers()
    vi.restoreAllMocks()
  })

  it('announces at most ALERTS_PER_RULE_PER_MINUTE events of a rule a minute, then one summary of the rest', async () => {
    const startMs = freezeClock()
    vi.setSystemTime(Math.floor(startMs / 60_000) * 60_000 + 60_000)
    const warn = vi.spyOn(console, 'warn')
    const { send, settled } = sender(rules(perUser('flood')), hook('flood'))
    const statuses = []
    for (let n = 0; n < FLOOD; n++) {
      statuses.push(await send('/flood', `user-${n}`))
      await settled()
    }
    expect(statuses).toEqual(Array(FLOOD).fill(200))
    const bodies = await received('flood')
    expect(bodies).toHaveLength(ALERTS_PER_RULE_PER_MINUTE)
    expect(new Set(bodies.map((b) => b.event))).toEqual(new Set(['near-limit']))
    const logged = warn.mock.calls.filter(([line]) =>
      String(line).includes('rate-limit-near-limit')
    )
    expect(logged).toHaveLength(ALERTS_PER_RULE_PER_MINUTE)

    // The next minute's first request sends the summary (the same key: nothing new to announce).
    vi.setSystemTime(Date.now() + 60_000)
    await send('/flood', `user-${FLOOD - 1}`)
    await settled()
    const after = await received('flood')
    expect(after).toHaveLength(ALERTS_PER_RULE_PER_MINUTE + 1)
    expect(after.at(-1)).toEqual({
      event: 'alerts-suppressed',
      rule: 'flood',
      minute: expect.any(String),
      perMinute: ALERTS_PER_RULE_PER_MINUTE,
      suppressed: { 'near-limit': FLOOD - ALERTS_PER_RULE_PER_MINUTE, 'limited-burst': 0 },
    })
  })

  it('sends at most one webhook POST per request, the rest with the requests that follow', async () => {
    const { send, settled } = sender(
      rules(perUser('two-a'), { ...perUser('two-b'), match: { path: '/two-a' } }),
      hook('two')
    )
    await send('/two-a', 'one')
    await settled()
    expect(await received('two')).toHaveLength(1)
    await send('/two-a', 'one')
    await settled()
    expect((await received('two')).map((b) => b.rule)).toEqual(['two-a', 'two-b'])
  })

  it('has at most MAX_WEBHOOKS_IN_FLIGHT POSTs in flight; the others wait in the queue', async () => {
    const { send, settled } = sender(rules(perUser('slow')), hook('slow', '?hang=1'))
    for (let n = 0; n < MAX_WEBHOOKS_IN_FLIGHT + 3; n++) await send('/slow', `user-${n}`)
    // Each request started its POST before answering, if it started one at all.
    expect(await received('slow')).toHaveLength(MAX_WEBHOOKS_IN_FLIGHT)
    await fetch(hook('slow', '/release'), { method: 'POST' })
    await settled()
    for (let n = 0; n < 3; n++) await send('/slow', 'user-0')
    await fetch(hook('slow', '/release'), { method: 'POST' })
    await settled()
    expect(await received('slow')).toHaveLength(MAX_WEBHOOKS_IN_FLIGHT + 3)
  })
})
