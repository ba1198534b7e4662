import { describe, expect, it, vi } from 'vitest'
import {
  fetchWithRateLimit,
  type FetchWithRateLimitOptions,
} from '../../src/client/fetch-with-rate-limit'

/** A fetch that answers from a script, and records what it was sent (the body read as text). */
function scripted(...answers: (() => Response)[]) {
  const sent: { method: string; body: string | null }[] = []
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init)
    sent.push({ method: request.method, body: request.body ? await request.text() : null })
    const answer = answers.shift()
    if (!answer) throw new Error('the script ran out')
    return answer()
  }
  return { fetch, sent }
}

const limited =
  (headers: Record<string, string> = { 'retry-after': '2' }) =>
  () =>
    new Response('slow down', { status: 429, headers })
const ok = () => () => new Response('ok')

/** No real sleeping: the waits are recorded. */
function seams(extra: Partial<FetchWithRateLimitOptions> = {}) {
  const slept: number[] = []
  return {
    slept,
    options: {
      sleep: async (ms: number) => {
        slept.push(ms)
      },
      random: () => 0.5,
      ...extra,
    } satisfies FetchWithRateLimitOptions,
  }
}

describe('fetchWithRateLimit', () => {
  it('waits what Retry-After says plus jitter, then returns the success', async () => {
    const { fetch, sent } = scripted(limited(), ok())
    const { slept, options } = seams({ fetch })
    const { response, waits } = await fetchWithRateLimit('https://api.test/x', undefined, options)
    expect(response.status).toBe(200)
    // 2 s, plus half of min(2 s, the first backoff of 500 ms).
    expect(waits).toEqual([{ attempt: 1, status: 429, waitMs: 2_250, hint: 'retry-after' }])
    expect(slept).toEqual([2_250])
    expect(sent).toHaveLength(2)
  })

  it('falls back to the RateLimit t, then to backoff alone, and retries 503 too', async () => {
    const { fetch } = scripted(
      limited({ ratelimit: '"a";r=0;t=4, "b";r=3;t=60' }),
      () => new Response(null, { status: 503 }),
      ok()
    )
    const { waits } = await fetchWithRateLimit(
      'https://api.test/x',
      undefined,
      seams({ fetch }).options
    )
    expect(waits).toEqual([
      { attempt: 1, status: 429, waitMs: 4_250, hint: 'ratelimit' },
      { attempt: 2, status: 503, waitMs: 500, hint: 'backoff' },
    ])
  })

  it('stops after maxRetries and returns the last 429', async () => {
    const { fetch, sent } = scripted(limited(), limited(), limited())
    const { response, waits } = await fetchWithRateLimit(
      'https://api.test/x',
      undefined,
      seams({ fetch, maxRetries: 2 }).options
    )
    expect(response.status).toBe(429)
    expect(await response.text()).toBe('slow down')
    expect(waits).toHaveLength(2)
    expect(sent).toHaveLength(3)
  })

  it('returns the 429 when the next wait would go past the budget', async () => {
    const { fetch, sent } = scripted(
      limited({ 'retry-after': '1' }),
      limited({ 'retry-after': '30' })
    )
    const { slept, options } = seams({ fetch, maxWaitMs: 10_000 })
    const { response, waits } = await fetchWithRateLimit('https://api.test/x', undefined, options)
    expect(response.status).toBe(429)
    expect(response.headers.get('retry-after')).toBe('30')
    expect(waits.map((w) => w.waitMs)).toEqual([1_250])
    expect(slept).toEqual([1_250])
    expect(sent).toHaveLength(2)
  })

  it('leaves other statuses alone', async () => {
    const { fetch, sent } = scripted(() => new Response(null, { status: 500 }))
    const { response, waits } = await fetchWithRateLimit(
      'https://api.test/x',
      undefined,
      seams({ fetch }).options
    )
    expect([response.status, waits, sent.length]).toEqual([500, [], 1])
  })

  it.each(['POST', 'PATCH', 'post', 'CONNECT'])('does not retry %s', async (method) => {
    const { fetch, sent } = scripted(limited())
    const { response, waits } = await fetchWithRateLimit(
      'https://api.test/x',
      { method: method === 'CONNECT' ? 'LOCK' : method, body: method === 'CONNECT' ? null : 'x' },
      seams({ fetch }).options
    )
    expect([response.status, waits, sent.length]).toEqual([429, [], 1])
  })

  it.each(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE'])('retries %s', async (method) => {
    const { fetch, sent } = scripted(limited(), ok())
    await fetchWithRateLimit('https://api.test/x', { method }, seams({ fetch }).options)
    expect(sent.map((s) => s.method)).toEqual([method, method])
  })

  it('retries a POST when told to, sending its body each time', async () => {
    const { fetch, sent } = scripted(limited(), ok())
    await fetchWithRateLimit(
      'https://api.test/x',
      { method: 'POST', body: '{"n":1}' },
      seams({ fetch, retryNonIdempotent: true }).options
    )
    expect(sent).toEqual([
      { method: 'POST', body: '{"n":1}' },
      { method: 'POST', body: '{"n":1}' },
    ])
  })

  it('clones a Request before each attempt, so its body goes every time', async () => {
    const { fetch, sent } = scripted(limited(), limited(), ok())
    const request = new Request('https://api.test/x', { method: 'PUT', body: 'payload' })
    const { response } = await fetchWithRateLimit(request, undefined, seams({ fetch }).options)
    expect(response.status).toBe(200)
    expect(sent.map((s) => s.body)).toEqual(['payload', 'payload', 'payload'])
  })

  it('does not retry a ReadableStream body, which cannot be sent twice', async () => {
    const { fetch, sent } = scripted(limited())
    const body = new Blob(['streamed']).stream()
    const { response, waits } = await fetchWithRateLimit(
      'https://api.test/x',
      { method: 'PUT', body },
      seams({ fetch }).options
    )
    expect([response.status, waits, sent]).toEqual([429, [], [{ method: 'PUT', body: 'streamed' }]])
  })

  it('rejects with the reason when the signal aborts a wait, and passes the signal to fetch', async () => {
    const controller = new AbortController()
    const reason = new Error('user left')
    const signals: (AbortSignal | null | undefined)[] = []
    const fetch = async (_: string | URL | Request, init?: RequestInit) => {
      signals.push(init?.signal)
      return limited({ 'retry-after': '30' })()
    }
    // The default sleep, on fake timers: abort once its 30 s timer is set, without waiting.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const pending = fetchWithRateLimit('https://api.test/x', undefined, {
        fetch,
        signal: controller.signal,
      })
      pending.catch(() => {})
      await vi.waitFor(() => expect(vi.getTimerCount()).toBe(1))
      controller.abort(reason)
      await expect(pending).rejects.toBe(reason)
      expect(vi.getTimerCount()).toBe(0)
    } finally {
      vi.useRealTimers()
    }
    expect(signals).toEqual([controller.signal])
  })

  it('does not start a wait once the signal has aborted', async () => {
    const controller = new AbortController()
    const fetch = async () => {
      controller.abort('gone')
      return limited()()
    }
    await expect(
      fetchWithRateLimit(new Request('https://api.test/x'), undefined, {
        fetch,
        signal: controller.signal,
      })
    ).rejects.toBe('gone')
  })

  it('refuses nonsense options at once', async () => {
    await expect(
      fetchWithRateLimit('https://api.test/x', undefined, { maxRetries: 1.5 })
    ).rejects.toThrow('fetchWithRateLimit(): maxRetries must be 0 or more, not 1.5')
    await expect(
      fetchWithRateLimit('https://api.test/x', undefined, { maxWaitMs: -1 })
    ).rejects.toThrow(RangeError)
  })
})
