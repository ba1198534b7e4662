/**
 * @module tools/fleet/judge
 * Holds what the fleet admitted to the exact limit, from outside: each admission is known only
 * by its request's span (sent, answered), so its decision may have been taken at any moment of
 * it. A run's time is cut into segments, each with the units the exact limit allows in it
 * (aligned windows; a reset starts a segment of its own, since the count restarts by design).
 * An admission is over the limit only when no choice of decision times within the spans fits
 * every segment under its bound: admissions are placed earliest deadline first, which leaves the
 * fewest over (an admission placed early never takes room a later one could not do without).
 */

/** One admitted request, seen from outside. */
export interface Admission {
  sentMs: number
  answeredMs: number
  /** Its units. */
  cost: number
}

/** A stretch of time and what the exact limit allows in it. */
export interface Segment {
  startMs: number
  /** The aligned window it belongs to. */
  windowStartMs: number
  /** Units the exact limit allows in it. */
  allowed: number
}

/** One aligned window: the units placed in it and what it allows. */
export interface WindowCount {
  startMs: number
  admitted: number
  allowed: number
}

/** The verdict on a run's admissions. */
export interface Judgement {
  windows: WindowCount[]
  /** Units no placement fits under the bounds. */
  overAdmitted: number
}

/**
 * Judges admissions against segments.
 *
 * @param admissions - what was admitted, in any order
 * @param segments - ascending by start, covering every admission's span; each ends where the next starts
 */
export function judge(admissions: readonly Admission[], segments: readonly Segment[]): Judgement {
  const starts = segments.map((s) => s.startMs)
  const segmentOf = (atMs: number) => Math.max(0, upperBound(starts, atMs) - 1)
  const byFirst = segments.map((): [last: number, cost: number][] => [])
  for (const a of admissions)
    byFirst[segmentOf(a.sentMs)]!.push([segmentOf(Math.max(a.sentMs, a.answeredMs)), a.cost])
  const placed = new Array<number>(segments.length).fill(0)
  let over = 0
  // Pending admissions, ordered by their last segment (a small array kept sorted: spans are short).
  let pending: [last: number, cost: number][] = []
  segments.forEach((segment, k) => {
    pending = pending.concat(byFirst[k]!).sort((x, y) => x[0] - y[0])
    let room = segment.allowed
    const later: [number, number][] = []
    for (const item of pending) {
      if (item[1] <= room) {
        room -= item[1]
        placed[k]! += item[1]
      } else if (item[0] <= k) {
        // Its last chance: what it takes past the bound is over-admitted, not all of it.
        placed[k]! += item[1]
        over += item[1] - room
        room = 0
      } else later.push(item)
    }
    pending = later
  })
  const windows = new Map<number, WindowCount>()
  segments.forEach((segment, k) => {
    const window = windows.get(segment.windowStartMs)
    if (window) {
      window.admitted += placed[k]!
      window.allowed = Math.max(window.allowed, segment.allowed)
    } else
      windows.set(segment.windowStartMs, {
        startMs: segment.windowStartMs,
        admitted: placed[k]!,
        allowed: segment.allowed,
      })
  })
  return { windows: [...windows.values()], overAdmitted: over }
}

/**
 * Aligned windows of `periodMs` over `[fromMs, toMs)`, cut at `cuts` (resets), each allowing
 * `allowedAt(windowStartMs)`.
 *
 * @param fromMs - the first instant to cover
 * @param toMs - past the last
 * @param periodMs - the window's length
 * @param allowedAt - the units a window allows, by its start
 * @param cuts - instants that start a segment of their own within their window
 */
export function segmentsOf(
  fromMs: number,
  toMs: number,
  periodMs: number,
  allowedAt: (windowStartMs: number) => number,
  cuts: readonly number[] = []
): Segment[] {
  const segments: Segment[] = []
  for (let start = Math.floor(fromMs / periodMs) * periodMs; start < toMs; start += periodMs) {
    const allowed = allowedAt(start)
    segments.push({ startMs: start, windowStartMs: start, allowed })
    for (const cut of cuts.filter((c) => c > start && c < start + periodMs).sort((a, b) => a - b))
      segments.push({ startMs: cut, windowStartMs: start, allowed })
  }
  return segments
}

/** The index of the first element greater than `value` in an ascending array. */
function upperBound(sorted: readonly number[], value: number): number {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (sorted[mid]! <= value) lo = mid + 1
    else hi = mid
  }
  return lo
}
