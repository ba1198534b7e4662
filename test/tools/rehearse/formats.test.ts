import { describe, expect, it } from 'vitest'
import { TraceError } from '../../../tools/simulate/trace'
import { openTraffic } from '../../../tools/rehearse/formats'
import type { TrafficRecord } from '../../../tools/rehearse/records'
import { lines, textFile } from '../../support/traffic'

/** Every record of a file, and the problems `bad` was given (the reading goes on past them). */
async function readAll(name: string, text: string, gzip = false) {
  const problems: string[] = []
  const opened = await openTraffic(textFile(name, text, gzip), (problem) => {
    problems.push(problem.message)
  })
  const records: TrafficRecord[] = []
  if (opened) for await (const batch of opened.batches) records.push(...batch)
  return { opened, records, problems }
}

/** The problem reading stops at (the default: the first bad line). */
async function firstProblem(name: string, text: string): Promise<string> {
  try {
    const opened = await openTraffic(textFile(name, text), (problem) => {
      throw problem
    })
    if (opened) for await (const _ of opened.batches);
  } catch (error) {
    if (error instanceof TraceError) return error.message
    throw error
  }
  throw new Error('no problem found')
}

const logpush = (fields: Record<string, unknown>) =>
  JSON.stringify({
    ClientIP: '203.0.113.7',
    ClientRequestHost: 'api.example.com',
    ClientRequestMethod: 'GET',
    ClientRequestURI: '/api/items?page=2',
    ClientCountry: 'nl',
    ClientASN: 64500,
    EdgeResponseStatus: 200,
    EdgeStartTimestamp: '2026-11-02T09:00:00Z',
    RequestHeaders: { 'X-Api-Key': 'k1' },
    ...fields,
  })

describe('Logpush http_requests', () => {
  it('reads every EdgeStartTimestamp format, and the fields rules read', async () => {
    const text = lines(
      logpush({ EdgeStartTimestamp: '2026-11-02T09:00:00.250Z' }),
      logpush({ EdgeStartTimestamp: 1793610001 }),
      // Unix nanoseconds, as a JSON number past 2^53 (written as Logpush writes it).
      logpush({ EdgeStartTimestamp: 0 }).replace(
        '"EdgeStartTimestamp":0',
        '"EdgeStartTimestamp":1793610002500000000'
      ),
      logpush({ EdgeStartTimestamp: '2026-11-02T10:00:03.5+01:00' })
    )
    const { opened, records, problems } = await readAll('logs.ndjson', text)
    expect(problems).toEqual([])
    expect(opened?.format).toBe('Logpush http_requests')
    expect([...opened!.carried.fields].sort()).toEqual(
      ['asn', 'country', 'host', 'ip', 'method', 'path', 'query', 'status'].sort()
    )
    expect(opened!.carried.headers).toBe('logged')
    const start = Date.UTC(2026, 10, 2, 9, 0, 0)
    expect(records.map((r) => r.atMs - start)).toEqual([250, 1000, 2500, 3500])
    expect(records[0]).toMatchObject({
      ip: '203.0.113.7',
      host: 'api.example.com',
      method: 'GET',
      target: '/api/items?page=2',
      country: 'NL',
      asn: 64500,
      status: 200,
      headers: { 'x-api-key': 'k1' },
      file: 'logs.ndjson',
      line: 1,
    })
  })

  it('reads gzipped files, told by their content', async () => {
    const { records } = await readAll('logs.txt', lines(logpush({}), logpush({})), true)
    expect(records).toHaveLength(2)
  })

  it('passes over the Worker’s own subrequests and says what a job without the URI lacks', async () => {
    const text = lines(
      logpush({ ClientRequestURI: undefined, ClientRequestPath: '/a' }),
      logpush({ ClientRequestURI: undefined, ClientRequestPath: '/b', WorkerSubrequest: true })
    )
    const { opened, records } = await readAll('logs.ndjson', text)
    expect(records.map((r) => r.target)).toEqual(['/a'])
    expect(opened!.carried.fields.has('path')).toBe(true)
    expect(opened!.carried.fields.has('query')).toBe(false)
  })

  it('names the file and line of a line that is not JSON, or a time it cannot read', async () => {
    expect(
      await firstProblem('a.ndjson', lines(logpush({}), '{"ClientIP": 1', logpush({})))
    ).toMatch(/^a\.ndjson:2: not JSON: /)
    expect(
      await firstProblem(
        'a.ndjson',
        lines(logpush({}), logpush({ EdgeStartTimestamp: 'yesterday' }))
      )
    ).toBe(
      'a.ndjson:2: EdgeStartTimestamp "yesterday" is not a time (RFC 3339, Unix seconds or Unix nanoseconds)'
    )
    expect(
      await firstProblem('a.ndjson', lines(logpush({}), logpush({ EdgeStartTimestamp: undefined })))
    ).toBe(
      'a.ndjson:2: no EdgeStartTimestamp: add the field to the Logpush job (see docs/rehearse.md)'
    )
  })

  it('goes on past bad lines when told to, counting each', async () => {
    const { records, problems } = await readAll(
      'a.ndjson',
      lines(logpush({}), 'oops', '', logpush({}), '[1]')
    )
    expect(records).toHaveLength(2)
    expect(problems).toEqual([
      expect.stringMatching(/^a\.ndjson:2: not JSON/),
      'a.ndjson:5: expected a JSON object, got "[1]"',
    ])
  })
})

describe("the Worker's own logs", () => {
  const tail = {
    outcome: 'ok',
    scriptName: 'edge-rate-limiter',
    eventTimestamp: 1793610000000,
    event: {
      request: {
        url: 'https://api.example.com/login?next=%2F',
        method: 'POST',
        headers: { 'cf-connecting-ip': '2001:db8::1', 'x-account': 'ann' },
        cf: { country: 'DE', asn: 3320 },
      },
      response: { status: 401 },
    },
    logs: [],
    exceptions: [],
  }

  it('reads wrangler tail --format json (indented objects), passing over other events', async () => {
    const alarm = { outcome: 'ok', eventTimestamp: 1793610000500, event: { scheduledTime: 1 } }
    const events = [tail, alarm, { ...tail, eventTimestamp: 1793610001000 }].map((event) =>
      JSON.stringify(event, null, 4)
    )
    const text = events.join('\n')
    const third = events[0]!.split('\n').length + events[1]!.split('\n').length + 1
    const { opened, records, problems } = await readAll('tail.json', text)
    expect(problems).toEqual([])
    expect(opened!.format).toBe('Worker logs (wrangler tail --format json)')
    expect(opened!.carried.headers).toBe('all')
    expect(records.map((r) => r.line)).toEqual([1, third])
    expect(records[0]).toMatchObject({
      atMs: 1793610000000,
      method: 'POST',
      host: 'api.example.com',
      target: '/login?next=%2F',
      ip: '2001:db8::1',
      country: 'DE',
      asn: 3320,
      status: 401,
      headers: { 'x-account': 'ann' },
    })
  })

  it('reads Logpush workers_trace_events, which hold no client address or headers', async () => {
    const event = {
      EventTimestampMs: 1793610000000,
      EventType: 'fetch',
      Outcome: 'ok',
      ScriptName: 'edge-rate-limiter',
      Event: {
        RayID: 'r',
        Request: { URL: 'https://api.example.com/a', Method: 'GET' },
        Response: { Status: 200 },
      },
    }
    const { opened, records } = await readAll('trace.ndjson', lines(JSON.stringify(event)))
    expect([...opened!.carried.fields].sort()).toEqual([
      'host',
      'method',
      'path',
      'query',
      'status',
    ])
    expect(opened!.carried.headers).toEqual(new Set())
    expect(records[0]).toMatchObject({ atMs: 1793610000000, target: '/a', status: 200 })
    expect(records[0]!.ip).toBeUndefined()
  })

  it('names an indented event cut short', async () => {
    const text = JSON.stringify(tail, null, 4).split('\n').slice(0, -1).join('\n')
    expect(await firstProblem('tail.json', text)).toBe(
      'tail.json:1: the logged event is cut short (no closing "}")'
    )
  })
})

describe('CSV', () => {
  it('reads the columns it knows, in any order and case, and lists the others', async () => {
    const text = lines(
      'Status,time,IP,method,url,header:X-Api-Key,user_agent',
      '200,2026-11-02T09:00:00Z,203.0.113.7,GET,https://api.example.com/a?b=1,k1,curl',
      '429,1793610001,203.0.113.8,POST,/login,,curl'
    )
    const { opened, records } = await readAll('t.csv', text)
    expect(opened!.format).toBe('CSV')
    expect(opened!.notes).toEqual(['columns not read: user_agent'])
    expect([...opened!.carried.fields].sort()).toEqual([
      'host',
      'ip',
      'method',
      'path',
      'query',
      'status',
    ])
    expect(opened!.carried.headers).toEqual(new Set(['x-api-key']))
    expect(records[0]).toMatchObject({
      host: 'api.example.com',
      target: '/a?b=1',
      headers: { 'x-api-key': 'k1' },
    })
    expect(records[1]).toMatchObject({ atMs: 1793610001000, target: '/login', status: 429 })
    expect(records[1]!.headers).toBeUndefined()
  })

  it('refuses a CSV without a time column, and a first line in no format', async () => {
    expect(await firstProblem('t.csv', lines('ip,path', '1.2.3.4,/'))).toBe(
      't.csv:1: a CSV without a time column (its columns: ip, path)'
    )
    expect(await firstProblem('t.txt', lines('', 'hello world'))).toMatch(
      /^t\.txt:2: unknown format: /
    )
    expect(await firstProblem('t.json', lines('{"a": 1}'))).toMatch(
      /^t\.json:1: unknown format: a JSON line/
    )
  })

  it('names rows with the wrong number of fields, or a time it cannot read', async () => {
    const text = lines('time,path', '2026-11-02T09:00:00Z,/a', '2026-11-02T09:00:01Z', 'soon,/b')
    const { problems } = await readAll('t.csv', text)
    expect(problems).toEqual([
      't.csv:3: expected 2 fields like the header, got 1',
      't.csv:4: the time "soon" is not a time (RFC 3339, or Unix seconds, ms or ns)',
    ])
  })
})

it('finds no requests in an empty file', async () => {
  expect((await readAll('empty.ndjson', '\n\n')).opened).toBeUndefined()
})
