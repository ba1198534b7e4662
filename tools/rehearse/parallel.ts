/**
 * @module tools/rehearse/parallel
 * A rehearsal on two cores (Node): the proposed document is decided in a worker thread that reads
 * the same traffic files itself, while this thread reads them again and decides the rules in
 * force; the worker sends its decisions back compactly (`remote.ts`), a batch at a time, at most
 * {@link AHEAD} requests ahead of what this thread has taken. The same module is the worker's
 * entry (started with `workerData` saying so), bundled or not.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import type { MethodOverrideMode } from '../../src/http/shared/settings'
import { parseRules, type Rule } from '../../src/rules'
import { TraceError } from '../simulate/trace'
import type { DecisionView } from './engine'
import type { TrafficFile } from './formats'
import type { Unjudged } from './needs'
import type { TrafficRecord } from './records'
import { Decoder, Encoder, type EncodedBatch } from './remote'
import { replay, type Elsewhere } from './rehearse'

/** How many decisions the worker may send before this thread has taken them. */
const AHEAD = 65_536

/** What the worker needs to decide the proposed document: all of it plain data. */
interface SideTask {
  kind: 'rehearse-proposed'
  /** The document as written, and its name. */
  document: unknown
  name: string
  files: string[]
  reorderMs: number
  skipBad: boolean
  methodOverride: MethodOverrideMode
  left: Unjudged[]
}

/** The worker's messages. */
type SideMessage =
  | { kind: 'batch'; batch: EncodedBatch }
  | { kind: 'done' }
  | {
      kind: 'failed'
      message: string
      at?: { file: string; line: number | undefined; problem: string }
    }

/**
 * Has the proposed document decided in a worker thread.
 *
 * @param task - the document as written (the compiled one stays here), the traffic's paths and
 *   the options, as the rehearsal has them
 * @param rules - the proposed rules compiled here (the worker numbers verdicts by their position)
 * @returns what `Rehearsal.proposedElsewhere` takes
 */
export function proposedInThread(
  task: Omit<SideTask, 'kind' | 'left'>,
  rules: readonly Rule[]
): (left: readonly Unjudged[]) => Elsewhere {
  return (left) => {
    const worker = new Worker(new URL(import.meta.url), {
      workerData: { ...task, kind: 'rehearse-proposed', left: [...left] } satisfies SideTask,
    })
    const decoder = new Decoder(rules)
    let ended: Error | 'done' | undefined
    let wake: (() => void) | undefined
    let taken = 0
    worker.on('message', (message: SideMessage) => {
      if (message.kind === 'batch') decoder.push(message.batch)
      else if (message.kind === 'done') ended = 'done'
      else
        ended = message.at
          ? new TraceError(message.at.file, message.at.line, message.at.problem)
          : new Error(`the thread deciding the proposed rules failed: ${message.message}`)
      wake?.()
    })
    worker.on('error', (error) => {
      ended = error
      wake?.()
    })
    const next = (record: TrafficRecord): DecisionView => {
      const decision = decoder.next(record)
      // Told now and then, not per request: the worker runs on until AHEAD past it.
      if (++taken % 4096 === 0) worker.postMessage(taken)
      return decision
    }
    const waited = async (record: TrafficRecord): Promise<DecisionView> => {
      while (decoder.pending === 0) {
        if (ended instanceof Error) throw ended
        if (ended === 'done') throw new Error('the thread deciding the proposed rules ended early')
        await new Promise<void>((resolve) => (wake = resolve))
      }
      return next(record)
    }
    return {
      take: (record) => (decoder.pending > 0 ? next(record) : waited(record)),
      close: () => void worker.terminate(),
    }
  }
}

/** The worker: decides the proposed document on the traffic and sends the decisions back. */
async function decideProposed(task: SideTask, port: NonNullable<typeof parentPort>): Promise<void> {
  const { createReadStream } = await import('node:fs')
  const { Readable } = await import('node:stream')
  const open = (path: string): TrafficFile => ({
    name: path,
    open: () => Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>,
  })
  const proposed = parseRules(task.document, task.name)
  const encoder = new Encoder(proposed.rules)
  let sent = 0
  let acknowledged = 0
  let wake: (() => void) | undefined
  port.on('message', (taken: number) => {
    acknowledged = taken
    wake?.()
  })
  const flush = () => {
    if (encoder.size === 0) return
    const batch = encoder.take()
    sent += batch.count
    port.postMessage({ kind: 'batch', batch } satisfies SideMessage, [
      batch.numbers.buffer as ArrayBuffer,
    ])
  }
  await replay(
    {
      // The rules in force are decided by the other thread: none here.
      current: { name: 'none', ruleSet: parseRules({ version: 1, rules: [] }, 'none') },
      proposed: { name: task.name, ruleSet: proposed },
      traffic: task.files.map(open),
      reorderMs: task.reorderMs,
      skipBad: task.skipBad,
      methodOverride: task.methodOverride,
      onDecision: (record, _, decision) => encoder.add(record, decision),
      onProgress: async () => {
        flush()
        while (sent - acknowledged > AHEAD) await new Promise<void>((resolve) => (wake = resolve))
      },
    },
    { current: [], proposed: task.left }
  )
  flush()
  port.postMessage({ kind: 'done' } satisfies SideMessage)
}

const task = workerData as SideTask | undefined
if (!isMainThread && parentPort && task?.kind === 'rehearse-proposed') {
  const port = parentPort
  decideProposed(task, port).then(
    () => port.close(),
    (error: unknown) => {
      const at =
        error instanceof TraceError
          ? { file: error.file, line: error.line, problem: error.problem }
          : undefined
      port.postMessage({
        kind: 'failed',
        message: String(error),
        ...(at ? { at } : {}),
      } satisfies SideMessage)
    }
  )
}
