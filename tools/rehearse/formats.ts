/**
 * @module tools/rehearse/formats
 * A traffic file as recorded requests, its format told by its content (never by its name):
 * Logpush `http_requests` NDJSON, a Worker's logs (NDJSON, or `wrangler tail --format json`'s
 * indented objects), or a CSV with a header row. Pure: the file comes as a byte stream.
 */
import { TraceError } from '../simulate/trace'
import { csvLayout, csvRecord, type CsvLayout } from './csv'
import { lineBatches } from './lines'
import { isLogpush, logpushCarries, logpushRecord } from './logpush'
import type { Carried, TrafficRecord } from './records'
import { isWorkerLog, workerLogCarries, workerLogRecord } from './worker-logs'

/** A traffic file: its name (for messages) and a way to read it, as often as needed. */
export interface TrafficFile {
  name: string
  open(): ReadableStream<Uint8Array>
}

/** What a file is, once its first request has been read. */
export interface OpenedTraffic {
  /** The format, as the report names it. */
  format: string
  carried: Carried
  /** Things worth saying about the file (columns not read). */
  notes: string[]
  /** Its requests in file order, a batch per chunk read; the first request is in the first. */
  batches: AsyncGenerator<TrafficRecord[]>
}

/** What a format makes of one entry: a record, a problem, or nothing (not a request). */
type Reader = (
  text: string,
  at: { file: string; line: number }
) => TrafficRecord | string | undefined

interface Format {
  name: string
  read: Reader
  /** What the format carries, from its first record's entry. */
  carries: (text: string) => Carried
  notes: string[]
  /** Wrangler's indented objects: an entry runs from a `{` line to a `}` line. */
  indented: boolean
  /** The first line is a header row, not a request. */
  header?: boolean
}

/**
 * Opens a traffic file and reads it up to its first request, to know its format.
 *
 * @param file - the file
 * @param bad - called with each line that cannot be read; it throws to stop (the default), or
 *   counts the line and returns to go on (`--skip-bad`)
 * @returns the file opened, or `undefined` when it holds no request
 * @throws {TraceError} for a file whose format cannot be told, or a bad line `bad` throws for
 */
export async function openTraffic(
  file: TrafficFile,
  bad: (problem: TraceError) => void
): Promise<OpenedTraffic | undefined> {
  const source = lineBatches(file.open())
  let pending: { first: number; lines: string[] } | undefined
  let index = 0
  let format: Format | undefined
  for (;;) {
    if (!pending || index >= pending.lines.length) {
      const next = await readBatch(source, file.name)
      if (!next) return undefined
      pending = next
      index = 0
    }
    const text = pending.lines[index]!
    if (text.trim() !== '') {
      format = formatOf(text, file.name, pending.first + index)
      break
    }
    index++
  }
  const first: { text?: string } = {}
  // A CSV's header row is no request.
  const start = index + (format.header ? 1 : 0)
  const records = framed(source, pending, start, file.name, format, bad, first)
  let batch: TrafficRecord[] = []
  while (batch.length === 0) {
    const next = await records.next()
    if (next.done) return undefined
    batch = next.value
  }
  return {
    format: format.name,
    carried: format.carries(first.text!),
    notes: format.notes,
    batches: again(batch, records),
  }
}

/** The batch already read, then the rest. */
async function* again(
  batch: TrafficRecord[],
  rest: AsyncGenerator<TrafficRecord[]>
): AsyncGenerator<TrafficRecord[]> {
  yield batch
  for await (const records of rest) if (records.length > 0) yield records
}

/**
 * The file's requests from `index` of `pending` on, a batch per batch of lines read; the text of
 * the first request's entry (a line, or an indented object's lines) goes to `first`.
 */
async function* framed(
  source: AsyncGenerator<{ first: number; lines: string[] }>,
  pending: { first: number; lines: string[] },
  index: number,
  file: string,
  format: Format,
  bad: (problem: TraceError) => void,
  first: { text?: string }
): AsyncGenerator<TrafficRecord[]> {
  let batch: { first: number; lines: string[] } | undefined = pending
  let object: { line: number; parts: string[] } | undefined
  const entryOf = (text: string, line: number): TrafficRecord | undefined => {
    const record = recordOf(text, line, file, format, bad)
    if (record && first.text === undefined) first.text = text
    return record
  }
  /** An indented object's request once its closing line is read. */
  const indented = (text: string, line: number): TrafficRecord | undefined => {
    if (object) {
      object.parts.push(text)
      if (text !== '}') return undefined
      const { parts, line: start } = object
      object = undefined
      return entryOf(parts.join('\n'), start)
    }
    if (text === '{') object = { line, parts: [text] }
    else if (text.trim() !== '')
      bad(
        new TraceError(
          file,
          line,
          `expected "{" to open the next logged event, got ${excerpt(text)}`
        )
      )
    return undefined
  }
  while (batch) {
    const records: TrafficRecord[] = []
    for (let i = index; i < batch.lines.length; i++) {
      const text = batch.lines[i]!
      const line = batch.first + i
      const record = format.indented
        ? indented(text, line)
        : text.trim() === ''
          ? undefined
          : entryOf(text, line)
      if (record) records.push(record)
    }
    yield records
    batch = await readBatch(source, file)
    index = 0
  }
  if (object)
    bad(new TraceError(file, object.line, 'the logged event is cut short (no closing "}")'))
}

/** An entry's request; problems go to `bad`, entries that are no request are dropped. */
function recordOf(
  text: string,
  line: number,
  file: string,
  format: Format,
  bad: (problem: TraceError) => void
): TrafficRecord | undefined {
  let read: TrafficRecord | string | undefined
  try {
    read = format.read(text, { file, line })
  } catch (error) {
    // splitCsvLine's quoting errors, already naming the file and line.
    if (!(error instanceof TraceError)) throw error
    bad(error)
    return undefined
  }
  if (typeof read === 'string') bad(new TraceError(file, line, read))
  return typeof read === 'object' ? read : undefined
}

async function readBatch(
  source: AsyncGenerator<{ first: number; lines: string[] }>,
  file: string
): Promise<{ first: number; lines: string[] } | undefined> {
  try {
    const next = await source.next()
    return next.done ? undefined : next.value
  } catch (error) {
    throw new TraceError(file, undefined, `cannot be read: ${(error as Error).message}`)
  }
}

/** The format of a file, from its first non-blank line. */
function formatOf(text: string, file: string, line: number): Format {
  const head = text.trim()
  if (head === '{') return workerLogs(true)
  if (!head.startsWith('{')) {
    const layout = csvLayout(text, file, line)
    if (typeof layout === 'string') throw new TraceError(file, line, layout)
    return csvFormat(layout)
  }
  const parsed = parseObject(text)
  if (typeof parsed === 'string') throw new TraceError(file, line, parsed)
  if (isLogpush(parsed))
    return jsonFormat('Logpush http_requests', false, logpushRecord, logpushCarries)
  if (isWorkerLog(parsed)) return workerLogs(false)
  throw new TraceError(
    file,
    line,
    'unknown format: a JSON line that is neither a Logpush http_requests line (EdgeStartTimestamp, ClientRequestURI, …) nor a Worker log entry (eventTimestamp or EventTimestampMs, event)'
  )
}

/** A Worker's logs, one entry a line or (wrangler tail --format json) indented. */
function workerLogs(indented: boolean): Format {
  const name = indented ? 'Worker logs (wrangler tail --format json)' : 'Worker logs'
  return jsonFormat(name, indented, workerLogRecord, workerLogCarries)
}

/** A format of JSON entries: each parsed, then read as a request. */
function jsonFormat(
  name: string,
  indented: boolean,
  record: (
    entry: Record<string, unknown>,
    at: { file: string; line: number }
  ) => TrafficRecord | string | undefined,
  carries: (entry: Record<string, unknown>) => Carried
): Format {
  return {
    name,
    indented,
    notes: [],
    read: (text, at) => {
      const parsed = parseObject(text)
      return typeof parsed === 'string' ? parsed : record(parsed, at)
    },
    carries: (text) => carries(parseObject(text) as Record<string, unknown>),
  }
}

function csvFormat(layout: CsvLayout): Format {
  return {
    name: 'CSV',
    indented: false,
    header: true,
    notes: layout.unread.length > 0 ? [`columns not read: ${layout.unread.join(', ')}`] : [],
    read: (text, at) => csvRecord(layout, text, at),
    carries: (text) => {
      // A `url` column with absolute URLs carries the host too.
      const record = csvRecord(layout, text, { file: '', line: 0 })
      const fields = new Set(layout.carried.fields)
      if (typeof record === 'object' && record.host !== undefined) fields.add('host')
      return { fields, headers: layout.carried.headers }
    },
  }
}

/** A JSON object, or the problem with the text. */
function parseObject(text: string): Record<string, unknown> | string {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return `not JSON: ${(error as Error).message}`
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `expected a JSON object, got ${excerpt(text)}`
  return value as Record<string, unknown>
}

function excerpt(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text)
}
