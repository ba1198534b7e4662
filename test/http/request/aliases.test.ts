import { describe, expect, it } from 'vitest'
import { client, rules } from '../../support/http'

const keyedOn = (part: string) =>
  rules({ id: 'per-key', key: [part], algorithm: 'fixed-window', limit: 2, period: '1h' })

describe('header aliases', () => {
  const send = client({ rules: keyedOn('header:x-api-key') })

  it('counts x_api_key and X-API-KEY under the key x-api-key', async () => {
    const statuses = []
    for (const name of ['x-api-key', 'x_api_key', 'X_Api_Key']) {
      statuses.push((await send('/x', { headers: { [name]: 'h1' } })).status)
    }
    expect(statuses).toEqual([200, 200, 429])
  })

  it('refuses two spellings with different values (400, nothing charged)', async () => {
    const response = await send('/x', { headers: { 'x-api-key': 'h2', x_api_key: 'junk' } })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ rule: 'per-key' })
    expect((await send('/x', { headers: { 'x-api-key': 'h2' } })).status).toBe(200)
    expect((await send('/x', { headers: { 'x-api-key': 'h2' } })).status).toBe(200)
  })
})

describe('query aliases', () => {
  const send = client({ rules: keyedOn('query:api_key') })

  it('counts api.key, api+key, api[key, api%20key and api_key[] under the key api_key', async () => {
    const statuses = []
    for (const name of ['api_key', 'api.key', 'api+key', 'api[key', 'api%20key', 'api_key[]']) {
      statuses.push((await send(`/x?${name}=q1`)).status)
    }
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429])
  })

  it('refuses a parameter sent under two spellings (400)', async () => {
    expect((await send('/x?api_key=q2&api.key=junk')).status).toBe(400)
    expect((await send('/x?api_key=q2&api.key=q2')).status).toBe(400)
  })
})
