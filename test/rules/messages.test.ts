import { describe, expect, it } from 'vitest'
import { parseRules } from '../../src/rules'
import { documentProblems } from '../support/rules'

const rule = (messages: unknown, fields: Record<string, unknown> = {}) => ({
  id: 'ws',
  key: ['ip'],
  algorithm: 'sliding-window',
  limit: 10,
  period: '1m',
  messages,
  ...fields,
})

describe('the messages field', () => {
  it('compiles to a sliding window, per connection and closing by default', () => {
    const ruleSet = parseRules({ version: 1, rules: [rule({ limit: 20, period: '10s' })] }, 't')
    expect(ruleSet.rules[0]!.messages).toEqual({
      per: 'connection',
      onExceed: 'close',
      policy: { algorithm: 'sliding-window', limit: 20, periodMs: 10_000 },
    })
  })

  it('takes per and onExceed, on any algorithm, and with a lowercase GET', () => {
    const ruleSet = parseRules(
      {
        version: 1,
        rules: [
          {
            id: 'slots',
            key: ['ip'],
            algorithm: 'concurrency',
            limit: 2,
            match: { methods: ['get', 'POST'] },
            messages: { limit: 5, period: 2, per: 'key', onExceed: 'drop' },
          },
          rule({ limit: 5, period: '1m' }, { id: 'leased', consistency: 'leased' }),
        ],
      },
      't'
    )
    expect(ruleSet.rules[0]!.messages).toMatchObject({ per: 'key', onExceed: 'drop' })
    expect(ruleSet.rules[0]!.messages!.policy.periodMs).toBe(2_000)
    expect(ruleSet.rules[1]!.messages).toBeDefined()
  })

  it('is absent from rules without it', () => {
    const ruleSet = parseRules({ version: 1, rules: [rule(undefined)] }, 't')
    expect(ruleSet.rules[0]!.messages).toBeUndefined()
  })

  it.each([
    [{ limit: 0, period: '1s' }, 'rules[0].messages.limit: 0 must be at least 1'],
    [{ limit: 1.5, period: '1s' }, 'rules[0].messages.limit: 1.5 is not a whole number'],
    [{ limit: '5', period: '1s' }, 'rules[0].messages.limit: expected a whole number, got "5"'],
    [{ period: '1s' }, 'rules[0].messages.limit: is required'],
    [
      { limit: 5, period: '10 sek' },
      'rules[0].messages.period: "10 sek" is not a duration (use "10s", "1m", "1h", "1d" or seconds, up to 365d)',
    ],
    [
      { limit: 5, period: '1s', per: 'socket' },
      'rules[0].messages.per: "socket" is not "connection" or "key"',
    ],
    [
      { limit: 5, period: '1s', onExceed: 'kick' },
      'rules[0].messages.onExceed: "kick" is not "close" or "drop"',
    ],
    [{ limit: 5, period: '1s', burst: 9 }, 'rules[0].messages: unknown field "burst"'],
    [20, 'rules[0].messages: expected a message limit object, got 20'],
  ])('refuses %j', (messages, problem) => {
    expect(documentProblems({ rules: [rule(messages)] })).toEqual([problem])
  })

  it('refuses a message limit on a rule whose methods leave out GET: it never sees an upgrade', () => {
    expect(
      documentProblems({
        rules: [
          rule({ limit: 5, period: '1s' }),
          rule({ limit: 5, period: '1s' }, { id: 'writes', match: { methods: ['POST', 'PUT'] } }),
        ],
      })
    ).toEqual([
      'rules[1].messages: only a GET request can upgrade to a WebSocket, and match.methods does not list "GET"',
    ])
  })
})
