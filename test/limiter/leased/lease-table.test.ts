import { describe, expect, it } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import { newKeyLease, type KeyLease } from '../../../src/limiter/leased/key-lease'
import { LeaseTable } from '../../../src/limiter/leased/lease-table'

const MINUTE = 60_000
const policy: LeasablePolicy = { algorithm: 'sliding-window', limit: 100, periodMs: MINUTE }

/** A table of at most `maxKeys` leases whose made and let-go leases are recorded. */
function tableOf(maxKeys: number) {
  const made: string[] = []
  const released: KeyLease[] = []
  const table = new LeaseTable<KeyLease & { tag: string }, string>({
    maxKeys,
    make: (ref, nowMs, tag) => {
      made.push(ref.key)
      return { ...newKeyLease(ref, 250, nowMs), tag }
    },
    release: (lease) => released.push(lease),
  })
  return { table, made, released }
}

describe('LeaseTable', () => {
  it('makes a lease once per key, with what its first use was given, and notes each use', () => {
    const { table, made } = tableOf(10)
    const first = table.touch({ ruleId: 'r', key: 'a', policy }, 1_000, 'first')
    const again = table.touch({ ruleId: 'r', key: 'a', policy }, 2_000, 'second')
    expect(again).toBe(first)
    expect(made).toEqual(['a'])
    expect(first.tag).toBe('first')
    expect(first.lastUsedMs).toBe(2_000)
    expect(table.get({ ruleId: 'r', key: 'a', policy: { ...policy } })).toBe(first)
    expect(table.get({ ruleId: 'other', key: 'a', policy })).toBeUndefined()
  })

  it('keeps a lease per policy of a key (its tiers, its versions), each used in turn', () => {
    const { table, released, made } = tableOf(10)
    const free = { ...policy, limit: 10, tier: 'free' }
    const paid = { ...policy, tier: 'paid' }
    const leases = [free, paid, free, paid].map((each, i) =>
      table.touch({ ruleId: 'r', key: 'a', policy: each }, i, 'x')
    )
    // A request of the other tier finds its own lease: nothing made again, nothing let go.
    expect(leases[2]).toBe(leases[0])
    expect(leases[3]).toBe(leases[1])
    expect(leases[0]!.policy).toBe(free)
    expect(made).toEqual(['a', 'a'])
    expect(released).toEqual([])
    // A reset drops every policy's lease of the key.
    expect(table.dropKey('r', 'a')).toEqual([leases[0], leases[1]])
    expect([...table.values()]).toEqual([])
  })

  it('keeps its bound by letting the least recently used go, in the order of their use', () => {
    const { table, released } = tableOf(2)
    const a = table.touch({ ruleId: 'r', key: 'a', policy }, 0, 'x')
    const b = table.touch({ ruleId: 'r', key: 'b', policy }, 1, 'x')
    table.touch({ ruleId: 'r', key: 'a', policy }, 2, 'x')
    table.touch({ ruleId: 'r', key: 'c', policy }, 3, 'x')
    expect(released).toEqual([b])
    expect([...table.values()].map((lease) => lease.key)).toEqual(['a', 'c'])
    expect([...table.values()]).toContain(a)
  })

  it('forgets a dropped lease, the last used one too', () => {
    const { table, made } = tableOf(10)
    const a = table.touch({ ruleId: 'r', key: 'a', policy }, 0, 'x')
    table.drop(a)
    expect(table.get(a)).toBeUndefined()
    const again = table.touch({ ruleId: 'r', key: 'a', policy }, 1, 'x')
    expect(again).not.toBe(a)
    expect(made).toEqual(['a', 'a'])
  })
})
