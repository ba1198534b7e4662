import { describe, expect, it } from 'vitest'
import { LINES_PER_EVENT_PER_MINUTE, LogBudget } from '../src/log'

const MINUTE = 60_000

describe('the log budget', () => {
  it('writes LINES_PER_EVENT_PER_MINUTE lines of an event a minute, then one summary of the rest in the next', () => {
    const budget = new LogBudget()
    const summaries: string[] = []
    const write = (line: string) => summaries.push(line)
    const t0 = 10 * MINUTE
    const admitted = Array.from({ length: 250 }, () => budget.admit('flood', t0 + 5, write))
    expect(admitted.filter(Boolean)).toHaveLength(LINES_PER_EVENT_PER_MINUTE)
    // Another event has a budget of its own.
    expect(budget.admit('other', t0 + 6, write)).toBe(true)
    expect(summaries).toEqual([])
    expect(budget.admit('flood', t0 + MINUTE, write)).toBe(true)
    expect(summaries.map((line) => JSON.parse(line))).toEqual([
      {
        event: 'log-suppressed',
        since: new Date(t0).toISOString(),
        perMinute: LINES_PER_EVENT_PER_MINUTE,
        suppressed: { flood: 250 - LINES_PER_EVENT_PER_MINUTE },
      },
    ])
  })

  it('writes no summary for a minute that left nothing out', () => {
    const budget = new LogBudget()
    const summaries: string[] = []
    budget.admit('quiet', 0, (line) => summaries.push(line))
    budget.admit('quiet', MINUTE, (line) => summaries.push(line))
    expect(summaries).toEqual([])
  })
})
