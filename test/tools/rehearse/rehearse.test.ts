import { describe, expect, it } from 'vitest'
import { parseRules } from '../../../src/rules'
import { TraceError } from '../../../tools/simulate/trace'
import { rehearse, type Rehearsal } from '../../../tools/rehearse/rehearse'
import { minutesCsv, rulesCsv, summaryText } from '../../../tools/rehearse/report'
import { judge, parseCondition } from '../../../tools/rehearse/verdict'
import { lines, textFile } from '../../support/traffic'

const T0 = Date.UTC(2026, 10, 2, 9, 0, 0)
const api = { match: { path: '/api/*' }, algorithm: 'sliding-window', limit: 2, period: '1m' }
const current = parseRules(
  { version: 1, rules: [{ id: 'per-ip', key: ['ip'], ...api }] },
  'current.json'
)
const proposed = parseRules(
  {
    version: 1,
    rules: [
      { id: 'per-key', key: ['header:x-api-key'], ...api },
      // x-tenant is in no request: Logpush did not log it, so this rule cannot be judged.
      { id: 'per-tenant', key: ['header:x-tenant'], ...api, limit: 1 },
    ],
  },
  'proposed.json'
)

/** A Logpush line: a GET of /api/a at `s` seconds, from `ip`, with an API key. */
const line = (s: number, ip: string, key: string) =>
  JSON.stringify({
    EdgeStartTimestamp: new Date(T0 + s * 1000).toISOString(),
    ClientIP: ip,
    ClientRequestHost: 'api.example.com',
    ClientRequestMethod: 'GET',
    ClientRequestURI: '/api/a',
    EdgeResponseStatus: 200,
    RequestHeaders: { 'x-api-key': key },
  })

// One address with three keys (a shared NAT), and one key from three addresses (a fleet).
const TRAFFIC = lines(
  line(0, '192.0.2.1', 'k1'),
  line(1, '192.0.2.1', 'k2'),
  line(2, '192.0.2.1', 'k3'),
  line(61, '198.51.100.1', 'k9'),
  line(62, '198.51.100.2', 'k9'),
  line(63, '198.51.100.3', 'k9')
)

const rehearsal = (overrides: Partial<Rehearsal> = {}): Rehearsal => ({
  current: { name: 'current.json', ruleSet: current },
  proposed: { name: 'proposed.json', ruleSet: proposed },
  traffic: [textFile('logs.ndjson.gz', TRAFFIC, true)],
  reorderMs: 60_000,
  skipBad: false,
  methodOverride: 'count',
  ...overrides,
})

describe('rehearsing a rules change', () => {
  it('reports per rule, per minute and in all who is newly denied and newly allowed', async () => {
    const report = await rehearse(rehearsal())
    expect(report.requests).toEqual({
      total: 6,
      deniedCurrent: 1,
      deniedProposed: 1,
      newlyDenied: 1,
      newlyAllowed: 1,
      newlyDeniedPercent: 100 / 6,
      newlyDeniedKeys: 1,
    })
    expect(report.rules).toEqual([
      {
        id: 'per-key',
        in: 'proposed',
        matched: 6,
        deniedCurrent: 0,
        deniedProposed: 1,
        newlyDenied: 1,
        newlyAllowed: 0,
        keysAffected: 1,
        keysNewlyDenied: 1,
        topNewlyDenied: [{ key: 'per-key|k9', count: 1, firstAt: '2026-11-02T09:01:03.000Z' }],
      },
      {
        id: 'per-ip',
        in: 'current',
        matched: 6,
        deniedCurrent: 1,
        deniedProposed: 0,
        newlyDenied: 0,
        newlyAllowed: 1,
        keysAffected: 1,
        keysNewlyDenied: 0,
        topNewlyDenied: [],
      },
    ])
    expect(report.unjudged).toEqual([
      { rule: 'per-tenant', needs: 'header:x-tenant', in: 'proposed', requests: 6 },
    ])
    expect(report.minutes).toEqual([
      {
        minute: '2026-11-02T09:00:00.000Z',
        requests: 3,
        deniedCurrent: 1,
        deniedProposed: 0,
        newlyDenied: 0,
        newlyAllowed: 1,
      },
      {
        minute: '2026-11-02T09:01:00.000Z',
        requests: 3,
        deniedCurrent: 0,
        deniedProposed: 1,
        newlyDenied: 1,
        newlyAllowed: 0,
      },
    ])
    expect(report.traffic).toEqual({
      files: [
        {
          name: 'logs.ndjson.gz',
          format: 'Logpush http_requests',
          fields: ['host', 'ip', 'method', 'path', 'query', 'status'],
          headers: 'logged',
        },
      ],
      from: '2026-11-02T09:00:00.000Z',
      to: '2026-11-02T09:01:03.000Z',
    })
    expect(report.skipped).toEqual({ count: 0, lines: [] })
    expect(minutesCsv(report.minutes).split('\n')[1]).toBe('2026-11-02T09:00:00.000Z,3,1,0,0,1')
    expect(rulesCsv(report.rules).split('\n')[1]).toBe(
      'per-key,proposed,6,0,1,1,0,1,1,per-key|k9 1 2026-11-02T09:01:03.000Z'
    )
    expect(summaryText(report)).toContain(
      'per-tenant (proposed): needs header:x-tenant; 6 requests may apply'
    )
  })

  it('stops at the first bad line, or counts and names each with --skip-bad', async () => {
    const bad = [textFile('logs.ndjson', `${TRAFFIC}not json\n${line(70, '192.0.2.9', 'k1')}\n`)]
    await expect(rehearse(rehearsal({ traffic: bad }))).rejects.toThrow(TraceError)
    await expect(rehearse(rehearsal({ traffic: bad }))).rejects.toThrow(/^logs\.ndjson:7: not JSON/)
    const report = await rehearse(rehearsal({ traffic: bad, skipBad: true }))
    expect(report.requests.total).toBe(7)
    expect(report.skipped.count).toBe(1)
    expect(report.skipped.lines[0]).toMatchObject({ file: 'logs.ndjson', line: 7 })
  })

  it('refuses traffic that holds no request, and notes a file that holds none', async () => {
    await expect(
      rehearse(rehearsal({ traffic: [textFile('empty.ndjson', '\n')] }))
    ).rejects.toThrow('empty.ndjson: no request in the traffic')
    const traffic = [textFile('logs.ndjson', TRAFFIC), textFile('empty.csv', '')]
    expect((await rehearse(rehearsal({ traffic }))).notes).toContain('empty.csv: no request')
  })

  it('gives CI its verdict', async () => {
    const { requests } = await rehearse(rehearsal())
    const conditions = [
      'newly-denied>10%',
      'newly-denied>20%',
      'newly-denied-keys>=1',
      'newly-allowed>1',
    ].map((text) => parseCondition(text) as Exclude<ReturnType<typeof parseCondition>, string>)
    expect(judge(conditions, requests)).toEqual([
      { condition: 'newly-denied>10%', value: '16.7% (1 of 6)', crossed: true },
      { condition: 'newly-denied>20%', value: '16.7% (1 of 6)', crossed: false },
      { condition: 'newly-denied-keys>=1', value: '1', crossed: true },
      { condition: 'newly-allowed>1', value: '1', crossed: false },
    ])
    expect(parseCondition('newly-denied-keys>1%')).toBe(
      '--fail-if "newly-denied-keys>1%": newly-denied-keys is a count of keys, not a share of requests'
    )
    expect(parseCondition('denied<3')).toMatch(/^--fail-if "denied<3": expected <measure>/)
  })
})
