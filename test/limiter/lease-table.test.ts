import { describe, expect, it } from 'vitest'
import type { LeasablePolicy } from '../../src/algorithms/reserve'
import { newKeyLease, type KeyLease } from '../../src/limiter/key-lease'
import { LeaseTable } from '../../src/limiter/lease-table'

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
    expect(table.get({ ruleId: 'r', key: 'a' })).toBe(first)
    expect(table.get({ ruleId: 'other', key: 'a' })).toBeUndefined()
  })

  it("remakes a key's lease when its policy changed, and lets the old one go", () => {
    const { table, released } = tableOf(10)
    const old = table.touch({ ruleId: 'r', key: 'a', policy }, 0, 'x')
    table.touch({ ruleId: 'r', key: 'b', policy }, 0, 'x')
    const tighter = { ...policy, limit: 50 }
    const remade = table.touch({ ruleId: 'r', key: 'a', policy: tighter }, 10, 'x')
    expect(remade).not.toBe(old)
    expect(remade.policy).toEqual(tighter)
    expect(released).toEqual([old])
    expect(table.get(old)).toBe(remade)
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
