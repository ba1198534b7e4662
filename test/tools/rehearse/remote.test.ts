import { describe, expect, it } from 'vitest'
import { parseRules } from '../../../src/rules'
import { ReplayLimiter, type DecisionView } from '../../../tools/rehearse/engine'
import type { TrafficRecord } from '../../../tools/rehearse/records'
import { Decoder, Encoder } from '../../../tools/rehearse/remote'
import { facts } from '../../support/facts'

const ruleSet = parseRules(
  {
    version: 1,
    rules: [
      { id: 'per-ip', key: ['ip'], algorithm: 'fixed-window', limit: 1, period: '1m' },
      { id: 'watch', key: [], algorithm: 'fixed-window', limit: 2, period: '1m', shadow: true },
      { id: 'all', key: [], algorithm: 'fixed-window', limit: 100, period: '1m' },
    ],
  },
  'test'
)

/** What the comparison reads of a decision, as plain data. */
const plain = (decision: DecisionView) => ({
  outcome: decision.outcome,
  rules: decision.rules.map(({ check, decision: said }) => ({
    rule: check.rule.id,
    shadow: check.shadow,
    allowed: said?.allowed,
    key: said && !said.allowed ? check.key : undefined,
  })),
})

const record = (line: number): TrafficRecord => ({ atMs: line, file: 'f', line })

describe('decisions sent between threads', () => {
  it('arrive as the comparison reads them, request by request', () => {
    const limiter = new ReplayLimiter(ruleSet)
    // Three addresses (the third over the shadow limit), then the first twice: its object
    // denies, then the isolate knows it and charges nothing else.
    const ips = ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.1', '192.0.2.1']
    const decisions = ips.map((ip, t) => limiter.decide(facts({ ip }), 200, 1_000 + t))
    const encoder = new Encoder(ruleSet.rules)
    decisions.slice(0, 3).forEach((decision, i) => encoder.add(record(i + 1), decision))
    const first = encoder.take()
    decisions.slice(3).forEach((decision, i) => encoder.add(record(i + 4), decision))
    const decoder = new Decoder(ruleSet.rules)
    decoder.push(first)
    decoder.push(encoder.take())
    const received = [1, 2, 3, 4, 5].map((line) => plain(decoder.next(record(line))))
    expect(received).toEqual(decisions.map(plain))
    // Every kind of verdict came up: allowed, refused, refused in shadow, not charged.
    expect(
      received.flatMap((d) => d.rules.map((r) => `${r.rule}:${r.allowed}:${r.shadow}`))
    ).toEqual(
      expect.arrayContaining([
        'per-ip:false:false',
        'watch:false:true',
        'all:undefined:false',
        'all:true:false',
      ])
    )
    expect(decoder.pending).toBe(0)
  })

  it('refuses a decision for another request than the one at hand', () => {
    const encoder = new Encoder(ruleSet.rules)
    encoder.add(record(7), new ReplayLimiter(ruleSet).decide(facts(), 200, 0))
    const decoder = new Decoder(ruleSet.rules)
    decoder.push(encoder.take())
    expect(() => decoder.next(record(8))).toThrow(
      'the threads read the traffic differently (line 7, not 8)'
    )
    expect(() => new Decoder(ruleSet.rules).next(record(1))).toThrow('sent no decision')
  })
})
