import { describe, expect, it } from 'vitest'
import { formatDuration, parseDuration } from '../../src/rules'

describe('durations', () => {
  it.each([
    ['10s', 10_000],
    ['1m', 60_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['250ms', 250],
    ['1.5s', 1_500],
    [' 2m ', 120_000],
    [30, 30_000],
    [0.5, 500],
    ['365d', 31_536_000_000],
  ])('%j is %i ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms)
  })

  it.each([
    '1x',
    '',
    'm',
    '-1s',
    '1 min',
    '0s',
    '0.1ms',
    '366d',
    0,
    -5,
    Number.NaN,
    Infinity,
    null,
    true,
    {},
  ])('%j is not a duration', (input) => {
    expect(parseDuration(input)).toBeUndefined()
  })

  it.each([
    [60_000, '1m'],
    [86_400_000, '1d'],
    [1_500, '1500ms'],
    [7_200_000, '2h'],
  ])('%i ms formats as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text)
  })
})
