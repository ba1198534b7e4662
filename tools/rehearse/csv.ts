/**
 * @module tools/rehearse/csv
 * Traffic as a CSV with a header row naming its columns: `time` (RFC 3339 or Unix seconds, ms or
 * ns), `ip`, `method`, `host`, `path` (with its query, if any) or `url` (absolute, or a path and
 * query), `country`, `asn`, `status`, and `header:<name>` for each request header it holds. Only
 * `time` is required; an empty cell is a field that request lacks. Other columns are not read.
 * Pure.
 */
import { splitCsvLine } from '../simulate/trace'
import type { Carried, RequestField, TrafficRecord } from './records'
import { unixMs } from './timestamps'

/** The columns read, and the request field each one carries. */
const COLUMNS: Record<string, RequestField[]> = {
  ip: ['ip'],
  method: ['method'],
  host: ['host'],
  path: ['path', 'query'],
  url: ['path', 'query'],
  country: ['country'],
  asn: ['asn'],
  status: ['status'],
}
const TIME_COLUMNS = ['time', 'timestamp']

/** A CSV's header, read: where each column is and what the rows carry. */
export interface CsvLayout {
  columns: string[]
  carried: Carried
  /** Columns of the header that are not read (as the notes list them). */
  unread: string[]
}

/**
 * Reads a CSV header row.
 *
 * @param line - the header row
 * @param file - for messages
 * @param number - its line number
 * @returns the layout, or a problem with the header (no time column; nothing a rule reads)
 */
export function csvLayout(line: string, file: string, number: number): CsvLayout | string {
  const columns = splitCsvLine(line, file, number).map((name) => name.trim().toLowerCase())
  const fields = new Set<RequestField>()
  const headers = new Set<string>()
  const unread: string[] = []
  for (const column of columns) {
    if (column.startsWith('header:') && column.length > 7) headers.add(column.slice(7))
    else if (column in COLUMNS) for (const field of COLUMNS[column]!) fields.add(field)
    else if (!TIME_COLUMNS.includes(column)) unread.push(column)
  }
  if (!columns.some((column) => TIME_COLUMNS.includes(column))) {
    return fields.size === 0 && headers.size === 0
      ? 'unknown format: the first line is neither JSON (Logpush, a Worker log) nor a CSV header naming time, ip, method, host, path or url, country, asn, status, header:<name>'
      : `a CSV without a time column (its columns: ${columns.join(', ')})`
  }
  return { columns, carried: { fields, headers }, unread }
}

/**
 * One CSV row as a recorded request.
 *
 * @param layout - the file's header
 * @param line - the row
 * @param at - its file and line number
 * @returns the record, or a problem to report at that line
 */
export function csvRecord(
  layout: CsvLayout,
  line: string,
  at: { file: string; line: number }
): TrafficRecord | string {
  const cells = splitCsvLine(line, at.file, at.line)
  if (cells.length !== layout.columns.length)
    return `expected ${layout.columns.length} fields like the header, got ${cells.length}`
  const record = { ...at } as TrafficRecord
  let time: string | undefined
  for (let i = 0; i < cells.length; i++) {
    const column = layout.columns[i]!
    const cell = cells[i]!.trim()
    if (cell === '') continue
    if (TIME_COLUMNS.includes(column)) time = cell
    else if (column.startsWith('header:')) (record.headers ??= {})[column.slice(7)] = cell
    else {
      const problem = setField(record, column, cell)
      if (problem) return problem
    }
  }
  const atMs = unixMs(time)
  if (atMs === undefined)
    return time === undefined
      ? 'the time is empty'
      : `the time ${JSON.stringify(time)} is not a time (RFC 3339, or Unix seconds, ms or ns)`
  record.atMs = atMs
  return record
}

/** Sets one column's field; a problem when the cell cannot be read. */
function setField(record: TrafficRecord, column: string, cell: string): string | undefined {
  switch (column) {
    case 'ip':
    case 'method':
    case 'host':
      record[column] = cell
      return
    case 'country':
      record.country = cell.toUpperCase()
      return
    case 'path':
      record.target = cell
      return
    case 'url': {
      if (cell.startsWith('/')) {
        record.target = cell
        return
      }
      try {
        const url = new URL(cell)
        record.host ??= url.host
        record.target = url.pathname + url.search
        return
      } catch {
        return `url ${JSON.stringify(cell)} is neither an absolute URL nor a path`
      }
    }
    case 'asn':
    case 'status': {
      if (!/^\d+$/.test(cell)) return `${column} ${JSON.stringify(cell)} is not a whole number`
      record[column] = Number(cell)
      return
    }
  }
}
