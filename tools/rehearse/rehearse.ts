/**
 * @module tools/rehearse/rehearse
 * A rehearsal: recorded traffic replayed in its own time order through the rules in force and
 * through the proposed ones, each as the Worker decides (`engine.ts`), compared request by
 * request (`tally.ts`). Rules the traffic cannot judge are left out from the start and listed;
 * when a pass shows that a header some rule reads was in no request (Logpush logs only the
 * custom fields its job names), the traffic is replayed again without the rules that read it.
 * Pure: the files come as byte streams, the same in Node and in a browser.
 */
import type { MethodOverrideMode } from '../../src/http/shared/settings'
import { matches, pathView } from '../../src/rules/match'
import { foldHeaderName } from '../../src/rules/fields'
import type { Matcher, RuleSet } from '../../src/rules/types'
import { TraceError } from '../simulate/trace'
import { ReplayLimiter, type DecisionView, type RequestDecision } from './engine'
import { recordFacts } from './facts'
import type { TrafficFile } from './formats'
import type { TrafficRecord } from './records'
import { readableMatch, unjudged, type Unjudged } from './needs'
import { inTimeOrder, type FileInfo } from './order'
import { fileRow } from './report'
import type { Report, Skipped, UnjudgedRow } from './report-types'
import { Tally } from './tally'

/** A rules document to rehearse, compiled, with the name the report gives it. */
export interface Document {
  name: string
  ruleSet: RuleSet
}

/** What to rehearse, and how. */
export interface Rehearsal {
  current: Document
  proposed: Document
  traffic: readonly TrafficFile[]
  /** How far (ms) a request may come after a later one in its file. */
  reorderMs: number
  /** Count and name bad lines instead of stopping at the first. */
  skipBad: boolean
  /** The Worker's `METHOD_OVERRIDE` setting. */
  methodOverride: MethodOverrideMode
  /** Told every few thousand requests: how many so far, and the time reached; awaited. */
  onProgress?: (requests: number, atMs: number) => void | Promise<void>
  /** Told each request's decision under each document (the last pass's, if there are two). */
  onDecision?: (record: TrafficRecord, current: DecisionView, proposed: DecisionView) => void
  /**
   * Has the proposed document decided elsewhere (another thread reading the same traffic, see
   * `parallel.ts`), leaving out the rules given; by default both are decided here.
   */
  proposedElsewhere?: (left: readonly Unjudged[]) => Elsewhere
}

/** Decisions of one document taken elsewhere, in the traffic's order. */
export interface Elsewhere {
  /**
   * The decision of the next request, which must be `record`: at once when it has come, else
   * once it comes.
   *
   * @throws {Error} when the other side failed (a `TraceError` as it is), or read other requests
   */
  take(record: TrafficRecord): DecisionView | Promise<DecisionView>
  /** Stops the other side (at the end, or when this side stops early). */
  close(): void
}

/** The most skipped lines the report names. */
const NAMED_SKIPS = 20

/** A request both documents answer alike, before any rule (a path the Worker refuses). */
const REFUSED: RequestDecision = { outcome: 'bad-request', rules: [] }

/**
 * Rehearses the proposed rules on the traffic.
 *
 * @param rehearsal - the documents, the traffic and the options
 * @returns the report (without a verdict)
 * @throws {TraceError} for the first bad line, unless `skipBad`
 */
export async function rehearse(rehearsal: Rehearsal): Promise<Report> {
  let left: { current: Unjudged[]; proposed: Unjudged[] } | undefined
  for (;;) {
    const pass = await replay(rehearsal, left)
    const late = {
      current: unjudged(rehearsal.current.ruleSet, pass.carried, pass.seen),
      proposed: unjudged(rehearsal.proposed.ruleSet, pass.carried, pass.seen),
    }
    const grew =
      late.current.length > pass.left.current.length ||
      late.proposed.length > pass.left.proposed.length
    if (!grew) return pass.report
    left = late
  }
}

/**
 * One pass over the traffic, leaving out `given` (by default, what the files show cannot be
 * judged). Exported for the thread that decides one document of a parallel rehearsal.
 *
 * @param rehearsal - what to rehearse
 * @param given - the rules of each document to leave out, if known
 */
export async function replay(
  rehearsal: Rehearsal,
  given: { current: Unjudged[]; proposed: Unjudged[] } | undefined
) {
  const skipped: Skipped = { count: 0, lines: [] }
  const bad = (problem: TraceError) => {
    if (!rehearsal.skipBad) throw problem
    skipped.count++
    if (skipped.lines.length < NAMED_SKIPS)
      skipped.lines.push({ file: problem.file, line: problem.line ?? 0, problem: problem.problem })
  }
  const traffic = await inTimeOrder(rehearsal.traffic, rehearsal.reorderMs, bad)
  if (traffic.files.length === 0)
    throw new TraceError(traffic.empty.join(', '), undefined, 'no request in the traffic')
  const carried = traffic.files.map((file) => file.carried)
  const { current, proposed } = rehearsal
  const left = given ?? {
    current: unjudged(current.ruleSet, carried),
    proposed: unjudged(proposed.ruleSet, carried),
  }
  const ids = (items: Unjudged[]) => new Set(items.map((item) => item.rule))
  const now = new ReplayLimiter(current.ruleSet, ids(left.current))
  const elsewhere = rehearsal.proposedElsewhere?.(left.proposed)
  const then = elsewhere ? undefined : new ReplayLimiter(proposed.ruleSet, ids(left.proposed))
  const tally = new Tally(
    current.ruleSet.rules.filter((rule) => !ids(left.current).has(rule.id)).map((rule) => rule.id),
    proposed.ruleSet.rules.filter((rule) => !ids(left.proposed).has(rule.id)).map((rule) => rule.id)
  )
  const apart = apartCounters(rehearsal, left, carried)
  const seen = new Set<string>()
  let from: number | undefined
  let to: number | undefined
  let requests = 0
  try {
    for await (const batch of traffic.batches) {
      for (const record of batch) {
        if (record.headers) for (const name in record.headers) seen.add(foldHeaderName(name))
        const read = recordFacts(record, rehearsal.methodOverride)
        if ('problem' in read) {
          bad(new TraceError(record.file, record.line, read.problem))
          continue
        }
        from ??= record.atMs
        to = record.atMs
        const facts = 'facts' in read ? read.facts : undefined
        const decidedNow = facts ? now.decide(facts, record.status, record.atMs) : REFUSED
        let decidedThen = elsewhere
          ? elsewhere.take(record)
          : facts
            ? then!.decide(facts, record.status, record.atMs)
            : REFUSED
        if (decidedThen instanceof Promise) decidedThen = await decidedThen
        tally.add(record.atMs, decidedNow, decidedThen)
        rehearsal.onDecision?.(record, decidedNow, decidedThen)
        if (facts && apart.length > 0) {
          const view = pathView(facts.path)
          for (const counter of apart)
            if (mayApply(counter.match, facts, view)) counter.row.requests++
        }
      }
      requests += batch.length
      await rehearsal.onProgress?.(requests, to ?? 0)
    }
  } finally {
    elsewhere?.close()
  }
  const result = tally.result()
  const report: Report = {
    mode: 'exact',
    current: current.name,
    proposed: proposed.name,
    traffic: {
      files: traffic.files.map(fileRow),
      ...(from === undefined ? {} : { from: iso(from), to: iso(to!) }),
    },
    requests: result.requests,
    rules: result.rules,
    unjudged: apart.map((counter) => counter.row),
    minutes: result.minutes,
    skipped,
    notes: [
      ...notesOf(rehearsal, traffic.files),
      ...traffic.empty.map((name) => `${name}: no request`),
    ],
  }
  return { report, carried, seen, left }
}

/** A counter of the requests a rule not judged may apply to. */
interface ApartCounter {
  row: UnjudgedRow
  /** Its match as far as the traffic can read it; `undefined`: a list (every request). */
  match: Matcher | undefined
}

function apartCounters(
  rehearsal: Rehearsal,
  left: { current: Unjudged[]; proposed: Unjudged[] },
  carried: FileInfo['carried'][]
): ApartCounter[] {
  const counters = new Map<string, ApartCounter>()
  for (const which of ['proposed', 'current'] as const) {
    const { ruleSet } = rehearsal[which]
    for (const item of left[which]) {
      const found = counters.get(item.rule)
      if (found) {
        found.row.in = 'both'
        continue
      }
      const rule = ruleSet.rules.find((candidate) => candidate.id === item.rule)
      counters.set(item.rule, {
        row: { rule: item.rule, needs: item.needs, in: which, requests: 0 },
        match: rule && readableMatch(rule.match, carried),
      })
    }
  }
  return [...counters.values()]
}

function mayApply(
  match: Matcher | undefined,
  facts: Parameters<typeof matches>[1],
  view: ReturnType<typeof pathView>
): boolean {
  if (!match) return true
  try {
    return matches(match, facts, view)
  } catch {
    // Ambiguous for the rule (the Worker would answer 400): it applies, as far as anyone can tell.
    return true
  }
}

/** What the report says beside its numbers. */
function notesOf(rehearsal: Rehearsal, files: readonly FileInfo[]): string[] {
  const rules = [...rehearsal.current.ruleSet.rules, ...rehearsal.proposed.ruleSet.rules]
  const notes = [
    'Exact mode: each key decided as its Durable Object decides every request, in the traffic’s time, as one isolate (a key it saw denied refuses the request before other rules are charged).',
  ]
  const leased = [
    ...new Set(rules.filter((rule) => rule.consistency === 'leased').map((rule) => rule.id)),
  ]
  if (leased.length > 0)
    notes.push(
      `Leased (${leased.join(', ')}): decided here as exact. Leased mode never admits more than the limit; it may deny early while the key's root has no room left and units sit in other isolates, at most the units the tiers hold (≤ 1.5·R·(h_root + h_loc), see docs/scale.md, "What is guaranteed, and what it costs"): none while demand stays under the limit.`
    )
  const inFlight = [
    ...new Set(rules.filter((rule) => rule.countOn?.inFlight).map((rule) => rule.id)),
  ]
  if (inFlight.length > 0)
    notes.push(
      `maxInFlight (${inFlight.join(', ')}): not replayed; logs do not say how long requests were in flight, so every slot is taken as free.`
    )
  if (rules.some((rule) => rule.countOn))
    notes.push(
      'countOn: a request is counted by the status the log recorded; one the rules in force refused was logged with their 429, not the status the origin would have given.'
    )
  for (const file of files) for (const note of file.notes) notes.push(`${file.name}: ${note}`)
  return notes
}

function iso(ms: number): string {
  return new Date(ms).toISOString()
}
