import { env } from 'cloudflare:workers'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { SlidingWindowPolicy } from '../../src/algorithms'
import { peek } from '../../src/limiter/client'
import { LeaseBook } from '../../src/limiter/leased/leases'
import {
  messagesKey,
  openMessageBudget,
  type MessageBudget,
  type MessageBudgetRef,
} from '../../src/limiter/message-budget'
import { ClientStats } from '../../src/limiter/calls/stats'
import { freezeClock } from '../support/clock'

const HOUR = 3_600_000
const rule = { id: 'chat' }

let keys = 0
/** A key no other test uses, with an hourly message limit. */
const budgetRef = (limit: number): MessageBudgetRef => ({
  rule,
  key: `chat|${++keys}`,
  policy: { algorithm: 'sliding-window', limit, periodMs: HOUR },
  failMode: 'open',
})

/** Stops the clock (objects included) just after an hour boundary, so no window ends. */
function startOfHour(): number {
  const startMs = Math.ceil(freezeClock() / HOUR) * HOUR + 1_000
  vi.setSystemTime(startMs)
  return startMs
}

const open = (ref: MessageBudgetRef, book: LeaseBook) =>
  openMessageBudget(env.LIMITER, ref, 5_000, book)

async function spent(budget: MessageBudget): Promise<boolean> {
  const result = await budget.spend()
  return result.enforced && result.decision.allowed
}

/** What the object has left for a key (0 units charged). */
async function remaining(key: string, policy: SlidingWindowPolicy): Promise<number> {
  return (await peek(env.LIMITER, { rule, key, policy }, 5_000)).remaining
}

afterEach(() => {
  vi.useRealTimers()
})

describe('per-key message budgets', () => {
  it('count in an object of their own, beside the key’s request counter', async () => {
    startOfHour()
    const ref = budgetRef(10)
    expect(messagesKey(ref.key)).toBe(`${ref.key}|#messages`)
    const book = new LeaseBook({ stats: new ClientStats(0) })
    const budget = open(ref, book)
    for (let i = 0; i < 4; i++) expect(await spent(budget)).toBe(true)
    budget.close()
    await book.settled()
    // The 4 messages (and what the location's object still holds) counted there, not here.
    expect(await remaining(messagesKey(ref.key), ref.policy)).toBeLessThanOrEqual(6)
    expect(await remaining(ref.key, ref.policy)).toBe(10)
  })

  it('never admit more than the limit across connections in several isolates, and exactly the limit once unspent units are back', async () => {
    startOfHour()
    const ref = budgetRef(40)
    const books = Array.from({ length: 3 }, () => new LeaseBook({ stats: new ClientStats(0) }))
    const budgets = books.flatMap((book) => [open(ref, book), open(ref, book)])
    const results = await Promise.all(
      Array.from({ length: 120 }, (_, i) => spent(budgets[i % budgets.length]!))
    )
    const admitted = results.filter(Boolean).length
    expect(admitted).toBeLessThanOrEqual(40)
    for (const budget of budgets) budget.close()
    await Promise.all(books.map((book) => book.settled()))
    expect(admitted + (await remaining(messagesKey(ref.key), ref.policy))).toBe(40)
  })

  it('batch: a busy key takes few object calls, and keeps its units while a connection is open', async () => {
    let nowMs = startOfHour()
    const ref = budgetRef(800)
    const stats = new ClientStats(0)
    const book = new LeaseBook({ stats })
    const [first, second] = [open(ref, book), open(ref, book)]
    for (let i = 0; i < 300; i++) {
      vi.setSystemTime((nowMs += 1))
      expect(await spent(i % 2 ? first : second)).toBe(true)
    }
    await book.settled()
    expect(stats.snapshot().durableObjectCalls).toBeLessThan(15)
    first.close()
    await book.settled()
    // The second connection's isolate and its location's object still hold a batch each (at
    // most 800 / 8 each).
    const held = 800 - 300 - (await remaining(messagesKey(ref.key), ref.policy))
    expect(held).toBeGreaterThan(0)
    expect(held).toBeLessThanOrEqual(2 * 100)
    second.close()
    await book.settled()
    // What was held and not spent can be spent again: by a new connection, 500 in all.
    const third = open(ref, book)
    let more = 0
    while (more < 600) {
      vi.setSystemTime((nowMs += 1))
      if (!(await spent(third))) break
      more++
    }
    expect(more).toBe(500)
  })
})
