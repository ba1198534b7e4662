/**
 * @module tools/simulate/choose
 * Which algorithm fits which need, with the numbers of the run at hand: the closing table of the
 * simulator's summary and of accuracy.md. Pure.
 */
import type { AccuracyRow } from './accuracy'

/** One need, the algorithm that meets it, and what it is bought with. */
interface Need {
  need: string
  pick: string
  /** The run's rows that show the pick (by algorithm label), and what to say of them. */
  algorithms: string[]
  because: (row: AccuracyRow) => string
  /** Said when the run has none of `algorithms`. */
  otherwise: string
}

const over = (row: AccuracyRow) =>
  `${row.overshoot} units (${percent(row.overshoot / row.limit)}) over the limit at worst`

const NEEDS: Need[] = [
  {
    need: 'never over the limit in any window',
    pick: 'sliding-log',
    algorithms: ['sliding-log'],
    because: (row) => `${over(row)}; state grows with the limit (at most 10,000)`,
    otherwise: 'exact; state grows with the limit (not in this run)',
  },
  {
    need: 'close to exact, with O(1) state',
    pick: 'sliding-window (default)',
    algorithms: ['sliding-window'],
    because: (row) =>
      `${over(row)}; denied with ${row.agreement.underAdmission} units of room at worst`,
    otherwise: 'approximates a sliding window (not in this run)',
  },
  {
    need: 'bursts allowed, the long-run rate held',
    pick: 'token-bucket or gcra',
    algorithms: ['token-bucket', 'gcra'],
    because: (row) => `admits up to burst at once: ${over(row)} in a window, by design`,
    otherwise: 'admits up to burst at once (not in this run)',
  },
  {
    need: 'an even flow to the origin',
    pick: 'leaky-bucket, "mode": "shape"',
    algorithms: ['leaky-bucket (shape)'],
    because: (row) => `${over(row)} by execution; requests wait up to maxWait`,
    otherwise: 'holds requests up to maxWait (not in this run)',
  },
  {
    need: 'fixed quotas, as Envoy counts them',
    pick: 'fixed-window',
    algorithms: ['fixed-window'],
    because: (row) => `simplest; ${over(row)}, around a window boundary`,
    otherwise: 'up to twice the limit around a boundary (not in this run)',
  },
  {
    need: 'at most N requests at the origin at once',
    pick: 'concurrency',
    algorithms: [],
    because: () => '',
    otherwise: 'counts requests in flight (not simulated: traces have no response times)',
  },
]

/**
 * The comparison as rows of `[need, pick, what this run shows]`.
 *
 * @param rows - the run's accuracy, one row per rule
 */
export function whichFits(rows: readonly AccuracyRow[]): string[][] {
  return NEEDS.map(({ need, pick, algorithms, because, otherwise }) => {
    const row = rows.find((r) => algorithms.includes(r.algorithm))
    return [need, pick, row ? `${row.id}: ${because(row)}` : otherwise]
  })
}

/** The headings of {@link whichFits}' rows. */
export const WHICH_FITS_HEADINGS = ['Need', 'Pick', 'This run']

function percent(fraction: number): string {
  return `${(Math.round(fraction * 10_000) / 100).toFixed(2)}%`
}
