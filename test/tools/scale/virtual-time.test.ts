import { describe, expect, it } from 'vitest'
import { EventHeap } from '../../../tools/scale/heap'
import { drainMicrotasks, VirtualClock } from '../../../tools/scale/virtual-time'

describe('the event heap', () => {
  it('pops by time, then by the order events were added', () => {
    const heap = new EventHeap()
    const order: string[] = []
    const times = [5, 1, 3, 1, 9, 0, 3]
    times.forEach((atMs, seq) => heap.push({ atMs, seq, run: () => order.push(`${atMs}.${seq}`) }))
    while (heap.size > 0) heap.pop()!.run!()
    expect(order).toEqual(['0.5', '1.1', '1.3', '3.2', '3.6', '5.0', '9.4'])
  })
})

describe('the virtual clock', () => {
  it('runs what is due, in order, never a cancelled event', () => {
    const clock = new VirtualClock(1_000)
    const ran: number[] = []
    clock.after(10, () => ran.push(10))
    const cancelled = clock.after(5, () => ran.push(5))
    clock.at(500, () => ran.push(0)) // in the past: due now
    clock.cancel(cancelled)
    expect(clock.runDue()).toBe(true)
    expect(ran).toEqual([0])
    expect(clock.nextAtMs()).toBe(1_010)
    clock.advanceTo(1_010)
    clock.runDue()
    expect(ran).toEqual([0, 10])
    expect(clock.nextAtMs()).toBe(Number.POSITIVE_INFINITY)
  })

  it('stands in for Date.now, setTimeout and clearTimeout while installed, without real waiting', async () => {
    const clock = new VirtualClock(1_800_000_000_000)
    const realNow = Date.now
    const restore = clock.install()
    const fired: number[] = []
    try {
      expect(Date.now()).toBe(1_800_000_000_000)
      setTimeout(
        (tag: string) => fired.push(Date.now() - 1_800_000_000_000, tag.length),
        60_000,
        'x'
      )
      const timer = setTimeout(() => fired.push(-1), 30_000)
      clearTimeout(timer)
      const slept = new Promise<void>((resolve) => setTimeout(resolve, 3_600_000))
      while (clock.nextAtMs() < Number.POSITIVE_INFINITY) {
        clock.advanceTo(clock.nextAtMs())
        clock.runDue()
        await drainMicrotasks()
      }
      await slept
      expect(fired).toEqual([60_000, 1])
      expect(Date.now()).toBe(1_800_003_600_000)
    } finally {
      restore()
    }
    expect(Date.now).toBe(realNow)
    expect(Math.abs(Date.now() - realNow())).toBeLessThan(1_000)
  })

  it('drains chains of microtasks before the clock moves on', async () => {
    let depth = 0
    const deep = async (n: number): Promise<void> => {
      if (n === 0) return
      await null
      depth++
      await deep(n - 1)
    }
    void deep(200)
    await drainMicrotasks()
    expect(depth).toBe(200)
  })
})
