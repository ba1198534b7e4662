import { describe, expect, it } from 'vitest'
import { parseRules } from '../../../src/rules'
import { client } from '../../support/http'

const send = client(
  {
    rules: parseRules(
      {
        version: 1,
        rules: [
          {
            id: 'login',
            match: { path: '/login' },
            key: ['ip'],
            algorithm: 'fixed-window',
            limit: 1,
            period: '1h',
          },
          {
            id: 'api',
            match: { path: '/api/*' },
            key: ['ip'],
            algorithm: 'fixed-window',
            limit: 1,
            period: '1h',
          },
        ],
      },
      'test'
    ),
  },
  { ORIGIN: 'demo' }
)

let clients = 0

/** Sends `spelling` once its rule is exhausted by `canonical`; answers never reach the origin. */
async function afterExhausting(canonical: string, spelling: string) {
  const ip = `198.51.100.${++clients}`
  expect((await send(canonical, { ip })).status).toBe(200)
  expect((await send(canonical, { ip })).status).toBe(429)
  const response = await send(spelling, { ip })
  expect(response.headers.get('x-demo-origin')).toBeNull()
  return response
}

describe('spellings of an exhausted route never reach the origin', () => {
  it.each([
    ['/login', '/login/'],
    ['/login', '/login;jsessionid=1'],
    ['/login', '/login%3b'],
    ['/login', '/Login'],
    ['/login', '/LOGIN'],
    ['/login', '/login.json'],
    ['/login', '/login%20'],
    ['/login', '/login.'],
    ['/login', '//login'],
    ['/api/x', '/api;x/y'],
    ['/api/x', '/API/x'],
    ['/api/x', '/%2561pi/x'],
    ['/api/x', '/api'],
    ['/api/x', '/api/..;/api/y'],
  ])('%s then %s: 429', async (canonical, spelling) => {
    const response = await afterExhausting(canonical, spelling)
    expect(response.status).toBe(429)
  })

  it.each([
    ['/login', '/login%00'],
    ['/api/x', '/api%09/x'],
    ['/api/x', '/api/%250a'],
  ])('%s then %s: 400 problem', async (canonical, spelling) => {
    const response = await afterExhausting(canonical, spelling)
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(await response.json()).toMatchObject({ status: 400, title: 'Bad Request' })
  })

  it('refuses a control character even where no rule matches', async () => {
    const response = await send('/elsewhere%00', { ip: '198.51.100.252' })
    expect(response.status).toBe(400)
    expect(response.headers.get('x-demo-origin')).toBeNull()
  })

  it('refuses a control character with the kill switch on too', async () => {
    const off = client(
      { rules: parseRules({ version: 1, mode: 'off', rules: [] }, 'test') },
      { ORIGIN: 'demo' }
    )
    const response = await off('/login%2500', { ip: '198.51.100.254' })
    expect(response.status).toBe(400)
    expect(response.headers.get('x-demo-origin')).toBeNull()
  })

  it('still forwards an ordinary path as it was sent', async () => {
    const response = await send('/Other;v=1/%61.json', { ip: '198.51.100.253' })
    expect(response.status).toBe(200)
    expect(((await response.json()) as { path: string }).path).toBe('/Other;v=1/%61.json')
  })
})
