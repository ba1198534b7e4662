import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../src/app'
import { client, rules } from '../support/http'

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
