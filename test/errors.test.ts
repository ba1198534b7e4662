import { describe, expect, it } from 'vitest'
import { BadRequestError, HttpError, LimiterUnavailableError } from '../src/errors'

describe('HttpError', () => {
  it('answers with its problem, extension members and headers', async () => {
    const response = new HttpError(405, 'Method Not Allowed', 'Use GET.', {
      headers: { Allow: 'GET' },
      extensions: { errors: ['x'] },
    }).getResponse()
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET')
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(await response.json()).toEqual({
      type: 'about:blank',
      title: 'Method Not Allowed',
      status: 405,
      detail: 'Use GET.',
      errors: ['x'],
    })
  })

  it('names the rule and field of a bad request once the rule is known, and keeps the message', async () => {
    const bare = new BadRequestError('query:k', 'k is sent twice.')
    expect(await bare.getResponse().json()).toEqual({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: 'k is sent twice.',
    })
    const named = new BadRequestError('query:k', 'k is sent twice.', 'per-key')
    expect(named.message).toBe('k is sent twice.')
    expect(await named.getResponse().json()).toEqual({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: 'k is sent twice. Rule "per-key" reads query:k.',
      rule: 'per-key',
    })
  })

  it('makes an unavailable limiter a 503 that says why', async () => {
    const error = new LimiterUnavailableError('timeout')
    expect(error).toBeInstanceOf(HttpError)
    expect(error.message).toBe('rate limiter unavailable: timeout')
    const response = error.getResponse()
    expect(response.status).toBe(503)
    expect(await response.json()).toMatchObject({
      detail: "The key's Durable Object could not answer (timeout).",
    })
  })
})
