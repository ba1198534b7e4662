/**
 * @module tools/rehearse/order
 * Recorded requests in time order, from files read as streams: each file may be out of order by
 * up to a set slack (Logpush writes a batch's lines as its edge servers finish them, not as
 * requests start), and files may overlap in time. Held in memory: the requests within the slack
 * of the files being read, never a whole file. A file is opened only when the replay reaches its
 * first request's time. Pure.
 */
import { TraceError } from '../simulate/trace'
import { TimedHeap } from '../scale/heap'
import { openTraffic, type OpenedTraffic, type TrafficFile } from './formats'
import type { Carried, TrafficRecord } from './records'

/** A file as the report describes it. */
export interface FileInfo {
  name: string
  format: string
  carried: Carried
  notes: string[]
}

/** The traffic, ready to replay. */
export interface OrderedTraffic {
  /** The files that hold requests, in the order named. */
  files: FileInfo[]
  /** The files that hold none. */
  empty: string[]
  /** Every request, in time order (ties: the order named, then line), a batch at a time. */
  batches: AsyncGenerator<TrafficRecord[]>
}

/** A request in the heap: its time, and its place in the files for ties. */
interface Held {
  atMs: number
  seq: number
  record: TrafficRecord
}

/** A file being read: what it has given so far. */
interface Reading {
  index: number
  name: string
  batches: AsyncGenerator<TrafficRecord[]>
  /** The latest time it has given. */
  latestMs: number
  done: boolean
}

/**
 * Opens the files and replays their requests in time order.
 *
 * @param files - the traffic files, in the order named
 * @param slackMs - how far (ms) a request may come after a later one in its file
 * @param bad - receives each line that cannot be read or comes too far out of order; throws to
 *   stop, returns to skip it
 * @throws {TraceError} for a file whose format cannot be told, or a bad line `bad` throws for
 */
export async function inTimeOrder(
  files: readonly TrafficFile[],
  slackMs: number,
  bad: (problem: TraceError) => void
): Promise<OrderedTraffic> {
  const info: FileInfo[] = []
  const empty: string[] = []
  const starts: { index: number; file: TrafficFile; atMs: number; opened?: OpenedTraffic }[] = []
  for (const [index, file] of files.entries()) {
    const opened = await openTraffic(file, bad)
    if (!opened) {
      empty.push(file.name)
      continue
    }
    const { format, carried, notes } = opened
    info.push({ name: file.name, format, carried, notes })
    const first = await opened.batches.next()
    const atMs = first.done ? Number.POSITIVE_INFINITY : first.value[0]!.atMs
    // One file is read on from here; others are opened again when the replay reaches them.
    if (files.length === 1) starts.push({ index, file, atMs, opened: reopened(opened, first) })
    else {
      await opened.batches.return(undefined)
      starts.push({ index, file, atMs })
    }
  }
  starts.sort((a, b) => a.atMs - b.atMs || a.index - b.index)
  return { files: info, empty, batches: merged(starts, slackMs, bad) }
}

/** The opened file with the batch already read put back in front. */
function reopened(opened: OpenedTraffic, first: IteratorResult<TrafficRecord[]>): OpenedTraffic {
  async function* again(): AsyncGenerator<TrafficRecord[]> {
    if (!first.done) yield first.value
    yield* opened.batches
  }
  return { ...opened, batches: again() }
}

async function* merged(
  starts: { index: number; file: TrafficFile; atMs: number; opened?: OpenedTraffic }[],
  slackMs: number,
  bad: (problem: TraceError) => void
): AsyncGenerator<TrafficRecord[]> {
  const heap = new TimedHeap<Held>()
  const reading: Reading[] = []
  let next = 0
  try {
    for (;;) {
      // Nothing earlier than `limit` can still come: every file being read gives nothing before
      // its latest time less the slack, and a file not yet open nothing before its first less it.
      let limit = Number.POSITIVE_INFINITY
      let behind: Reading | undefined
      for (const file of reading)
        if (!file.done && file.latestMs - slackMs < limit) {
          limit = file.latestMs - slackMs
          behind = file
        }
      const start = starts[next]
      const opensNext = start !== undefined && start.atMs - slackMs <= limit
      if (opensNext) limit = start.atMs - slackMs
      const ready: TrafficRecord[] = []
      while (heap.size > 0 && heap.peek()!.atMs < limit) ready.push(heap.pop()!.record)
      if (ready.length > 0) yield ready
      if (opensNext) {
        next++
        const opened = start.opened ?? (await openTraffic(start.file, bad))
        if (opened)
          reading.push({
            index: start.index,
            name: start.file.name,
            batches: opened.batches,
            latestMs: Number.NEGATIVE_INFINITY,
            done: false,
          })
        continue
      }
      if (!behind) return
      const batch = await behind.batches.next()
      if (batch.done) {
        behind.done = true
        continue
      }
      for (const record of batch.value) {
        if (record.atMs < behind.latestMs - slackMs) {
          bad(outOfOrder(record, behind.latestMs, slackMs))
          continue
        }
        if (record.atMs > behind.latestMs) behind.latestMs = record.atMs
        heap.push({ atMs: record.atMs, seq: behind.index * 2 ** 32 + record.line, record })
      }
    }
  } finally {
    for (const file of reading) if (!file.done) await file.batches.return(undefined)
  }
}

function outOfOrder(record: TrafficRecord, latestMs: number, slackMs: number): TraceError {
  const behindS = ((latestMs - record.atMs) / 1000).toFixed(3)
  return new TraceError(
    record.file,
    record.line,
    `${new Date(record.atMs).toISOString()} is ${behindS} s before a request above it in the file, more than --reorder (${slackMs / 1000} s) allows`
  )
}
