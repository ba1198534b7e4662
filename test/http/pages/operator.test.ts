import { describe, expect, it } from 'vitest'
import { OPERATOR_CSS, OPERATOR_HTML, OPERATOR_JS } from '../../../src/http/pages/operator-assets'
import { OPERATOR_CSP } from '../../../src/http/pages/operator'
import { client, rules } from '../../support/http'

const TOKEN = 'operator-page-token'
const open = rules({
  id: 'page-ip',
  key: ['ip'],
  algorithm: 'fixed-window',
  limit: 5,
  period: '1h',
})

describe('the operator page', () => {
  const send = client({ rules: open }, { ADMIN_TOKEN: TOKEN, ORIGIN: 'demo' })

  it('serves its HTML, script and stylesheet without the token, each under the strict CSP', async () => {
    const files = [
      ['/__ratelimit/', 'text/html', OPERATOR_HTML],
      ['/__ratelimit/ui/app.js', 'text/javascript', OPERATOR_JS],
      ['/__ratelimit/ui/app.css', 'text/css', OPERATOR_CSS],
    ] as const
    for (const [path, type, body] of files) {
      const response = await send(path)
      expect(response.status, path).toBe(200)
      expect(response.headers.get('content-type')).toContain(type)
      expect(response.headers.get('content-security-policy')).toBe(
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
      )
      expect(response.headers.get('x-content-type-options')).toBe('nosniff')
      expect(await response.text()).toBe(body)
    }
    expect(OPERATOR_CSP).not.toMatch(/unsafe/)
  })

  it('has no inline script, style or event handler for the CSP to refuse', () => {
    expect(OPERATOR_HTML).toContain('<script src="ui/app.js" defer></script>')
    expect(OPERATOR_HTML).not.toMatch(/<script(?![^>]*\ssrc=)|<style|\sstyle=|\son[a-z]+=/i)
  })

  it('never parses HTML in its script: keys and rule ids go in as text only', () => {
    // Also enforced in ui/ by ESLint; this checks what is shipped, uPlot included.
    expect(OPERATOR_JS).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/)
    expect(OPERATOR_JS).toContain('textContent')
  })

  it('sends /__ratelimit to /__ratelimit/ so its relative URLs resolve under the prefix', async () => {
    const response = await send('/__ratelimit', { redirect: 'manual' })
    expect(response.status).toBe(308)
    expect(response.headers.get('location')).toBe('/__ratelimit/')
  })

  it('keeps the API behind the token', async () => {
    expect((await send('/__ratelimit/rules')).status).toBe(401)
    expect((await send('/__ratelimit/', { method: 'POST' })).status).toBe(401)
    expect((await send('/__ratelimit/ui/other.js')).status).toBe(401)
  })

  it('is not there without ADMIN_TOKEN, like the rest of the prefix', async () => {
    const bare = client({ rules: open }, { ORIGIN: 'demo', ADMIN_TOKEN: '' })
    expect((await bare('/__ratelimit/')).status).toBe(404)
    expect((await bare('/__ratelimit/ui/app.js')).status).toBe(404)
  })

  it('follows ADMIN_PREFIX', async () => {
    const custom = client(
      { rules: open },
      { ADMIN_TOKEN: TOKEN, ORIGIN: 'demo', ADMIN_PREFIX: '/ops/rl' }
    )
    expect((await custom('/ops/rl/')).status).toBe(200)
    expect((await custom('/ops/rl', { redirect: 'manual' })).headers.get('location')).toBe(
      '/ops/rl/'
    )
    // The default prefix is then an ordinary path of the origin.
    expect(await (await custom('/__ratelimit/')).text()).not.toBe(OPERATOR_HTML)
  })
})
