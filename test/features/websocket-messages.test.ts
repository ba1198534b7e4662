import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp } from '../../src/app'
import { parseRules } from '../../src/rules'
import { freezeClock } from '../support/clock'

/** What the test origin recorded of a socket (see test/support/origin-server.ts). */
interface Recording {
  messages: string[]
  closeCode?: number
  closeReason?: string
}

let sockets = 0

/**
 * An app whose rules are `rules` (each keyed on ip, 100 upgrades a minute, unless they say
 * otherwise), forwarding to the test origin; `connect` opens a WebSocket through it.
 */
function setup(...rules: Record<string, unknown>[]) {
  const app = createApp({
    rules: parseRules(
      {
        version: 1,
        // Through JSON, so that `period: undefined` leaves the field out.
        rules: JSON.parse(
          JSON.stringify(
            rules.map((rule) => ({
              key: ['ip'],
              algorithm: 'sliding-window',
              limit: 100,
              period: '1m',
              ...rule,
            }))
          )
        ),
      },
      't'
    ),
  })
  return async (ip: string) => {
    const name = `messages-${++sockets}`
    const ctx = createExecutionContext()
    const response = await app.fetch(
      new Request(`https://example.com/__ws/${name}`, {
        headers: { upgrade: 'websocket', 'cf-connecting-ip': ip },
      }),
      { ...env, ORIGIN: env.TEST_ORIGIN },
      ctx
    )
    expect(response.status).toBe(101)
    const socket = response.webSocket!
    socket.accept()
    const inbox: string[] = []
    const readers: ((data: string) => void)[] = []
    socket.addEventListener('message', ({ data }) => {
      const reader = readers.shift()
      if (reader) reader(data as string)
      else inbox.push(data as string)
    })
    const closed = new Promise<CloseEvent>((resolve) => socket.addEventListener('close', resolve))
    return {
      socket,
      /** The next message the client receives. */
      next: () =>
        inbox.length > 0
          ? Promise.resolve(inbox.shift()!)
          : new Promise<string>((resolve) => readers.push(resolve)),
      /** Sends each message, then waits for each echo in turn. */
      async echoed(...messages: string[]) {
        for (const message of messages) socket.send(message)
        const echoes: string[] = []
        for (const _ of messages) echoes.push(await this.next())
        return echoes
      },
      closed,
      /** What reached the origin, once its socket has closed. */
      origin: async () => {
        const recorded = await fetch(`${env.TEST_ORIGIN}/__ws/${name}`)
        return (await recorded.json()) as Recording
      },
      /** Closes from the client and waits for the relay to be done. */
      async close() {
        socket.close(1000, 'done')
        await closed
        await waitOnExecutionContext(ctx)
      },
    }
  }
}

afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe('WebSocket message limits', () => {
  it('forwards messages under the limit in order, each echoed, and passes the close on', async () => {
    const connect = setup({ id: 'chat', messages: { limit: 5, period: '10s' } })
    const chat = await connect('203.0.113.160')
    expect(await chat.echoed('m1', 'm2', 'm3', 'm4', 'm5')).toEqual(['m1', 'm2', 'm3', 'm4', 'm5'])
    await chat.close()
    expect(await chat.origin()).toEqual({
      messages: ['m1', 'm2', 'm3', 'm4', 'm5'],
      closeCode: 1000,
      closeReason: 'done',
    })
  })

  it('closes with 1008 at message limit + 1, and nothing after it reaches the origin', async () => {
    const warn = vi.spyOn(console, 'warn')
    const connect = setup({ id: 'chat-close', messages: { limit: 3, period: '1m' } })
    const chat = await connect('203.0.113.161')
    expect(await chat.echoed('m1', 'm2', 'm3')).toEqual(['m1', 'm2', 'm3'])
    chat.socket.send('m4')
    chat.socket.send('m5')
    const closed = await chat.closed
    expect(closed.code).toBe(1008)
    expect(closed.reason).toBe('rate limit exceeded: chat-close')
    expect(await chat.origin()).toEqual({
      messages: ['m1', 'm2', 'm3'],
      closeCode: 1008,
      closeReason: 'rate limit exceeded: chat-close',
    })
    const logged = warn.mock.calls.map(([line]) => JSON.parse(String(line)))
    expect(logged).toContainEqual({
      event: 'websocket-messages-limited',
      dropped: {},
      closedBy: 'chat-close',
    })
  })

  it('drops a message over the limit with one notice per window, and lets messages through again after retryAfterMs', async () => {
    const startMs = Math.ceil(freezeClock() / 10_000) * 10_000 + 1_000
    vi.setSystemTime(startMs)
    const warn = vi.spyOn(console, 'warn')
    const connect = setup({
      id: 'chat-drop',
      messages: { limit: 2, period: '10s', onExceed: 'drop' },
    })
    const chat = await connect('203.0.113.162')
    expect(await chat.echoed('m1', 'm2')).toEqual(['m1', 'm2'])
    chat.socket.send('m3')
    chat.socket.send('m4')
    const notice = JSON.parse(await chat.next())
    // The sliding window: the two messages of this window count half in the next one, from 5 s in.
    expect(notice).toEqual({ error: 'rate-limited', rule: 'chat-drop', retryAfterMs: 14_000 })
    vi.setSystemTime(startMs + notice.retryAfterMs)
    // Had m3 or m4 gone on, or m4 been noticed, m5's echo would not come next.
    expect(await chat.echoed('m5')).toEqual(['m5'])
    await chat.close()
    expect((await chat.origin()).messages).toEqual(['m1', 'm2', 'm5'])
    const logged = warn.mock.calls.map(([line]) => JSON.parse(String(line)))
    expect(logged).toContainEqual({
      event: 'websocket-messages-limited',
      dropped: { 'chat-drop': 2 },
    })
  })

  it('counts per key across connections: two sockets of one client share one budget', async () => {
    const connect = setup({
      id: 'chat-key',
      messages: { limit: 3, period: '1h', per: 'key', onExceed: 'drop' },
    })
    const a = await connect('203.0.113.163')
    const b = await connect('203.0.113.163')
    const other = await connect('203.0.113.164')
    expect(await a.echoed('a1', 'a2')).toEqual(['a1', 'a2'])
    expect(await b.echoed('b1')).toEqual(['b1'])
    b.socket.send('b2')
    expect(JSON.parse(await b.next())).toMatchObject({ error: 'rate-limited', rule: 'chat-key' })
    a.socket.send('a3')
    expect(JSON.parse(await a.next())).toMatchObject({ error: 'rate-limited', rule: 'chat-key' })
    expect(await other.echoed('c1', 'c2', 'c3')).toEqual(['c1', 'c2', 'c3'])
    await Promise.all([a.close(), b.close(), other.close()])
    expect((await a.origin()).messages).toEqual(['a1', 'a2'])
    expect((await b.origin()).messages).toEqual(['b1'])
  })

  it('counts every rule, and the strictest outcome wins: close beats drop', async () => {
    const connect = setup(
      { id: 'soft', messages: { limit: 2, period: '1m', onExceed: 'drop' } },
      { id: 'hard', messages: { limit: 3, period: '1m', onExceed: 'close' } }
    )
    const chat = await connect('203.0.113.165')
    expect(await chat.echoed('m1', 'm2')).toEqual(['m1', 'm2'])
    chat.socket.send('m3')
    expect(JSON.parse(await chat.next())).toMatchObject({ rule: 'soft' })
    // "hard" counted m3 although "soft" dropped it: m4 is its fourth.
    chat.socket.send('m4')
    const closed = await chat.closed
    expect([closed.code, closed.reason]).toEqual([1008, 'rate limit exceeded: hard'])
    expect((await chat.origin()).messages).toEqual(['m1', 'm2'])
  })

  it('only reports what a rule in shadow would have refused', async () => {
    const warn = vi.spyOn(console, 'warn')
    const connect = setup({ id: 'chat-shadow', shadow: true, messages: { limit: 1, period: '1m' } })
    const chat = await connect('203.0.113.166')
    expect(await chat.echoed('m1', 'm2', 'm3')).toEqual(['m1', 'm2', 'm3'])
    await chat.close()
    const logged = warn.mock.calls.map(([line]) => JSON.parse(String(line)))
    expect(logged).toContainEqual({
      event: 'websocket-messages-limited',
      dropped: {},
      wouldLimit: { 'chat-shadow': 2 },
    })
  })

  it('passes the origin’s close on to the client, code and reason', async () => {
    const warn = vi.spyOn(console, 'warn')
    const connect = setup({ id: 'chat-origin-close', messages: { limit: 2, period: '1m' } })
    const chat = await connect('203.0.113.168')
    chat.socket.send('__close 4001 origin says bye')
    const closed = await chat.closed
    expect([closed.code, closed.reason]).toEqual([4001, 'origin says bye'])
    expect(warn).not.toHaveBeenCalled()
  })

  it('holds a concurrency slot until a socket closed for its messages closes', async () => {
    const connect = setup({
      id: 'chat-slots',
      algorithm: 'concurrency',
      limit: 1,
      period: undefined,
      messages: { limit: 1, period: '1m' },
    })
    const chat = await connect('203.0.113.169')
    expect(await chat.echoed('m1')).toEqual(['m1'])
    await expect(connect('203.0.113.169')).rejects.toThrow('expected 429 to be 101')
    chat.socket.send('m2')
    expect((await chat.closed).code).toBe(1008)
    await chat.close()
    const again = await connect('203.0.113.169')
    await again.close()
  })

  it('leaves a socket of rules without message limits as it was', async () => {
    const connect = setup({ id: 'chat-free' })
    const chat = await connect('203.0.113.167')
    expect(await chat.echoed(...Array.from({ length: 20 }, (_, i) => `m${i}`))).toHaveLength(20)
    await chat.close()
    expect((await chat.origin()).messages).toHaveLength(20)
  })
})
