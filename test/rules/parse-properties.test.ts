import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { RuleConfigError } from '../../src/errors'
import { parseRules } from '../../src/rules'
import { anyJson, mutatedDocument, validDocument } from '../../tools/fuzz-rules'

/**
 * A problem line: a field path (`(document)`, `rules[0]`, `rules[1].match.path[0]`,
 * `lists.allow.ips[2]`, `domains[0].descriptors[1]`), then `: ` or ` (` (Envoy's descriptor name).
 */
const PROBLEM = /^(\(document\)|[A-Za-z$_][\w$]*(\[\d+\]|\.[^.[\]:\s]+)*)(: | \()/

/** What parsing did: accepted, or the problems of a RuleConfigError. Anything else is thrown. */
function outcome(input: unknown): { ok: true } | { ok: false; problems: readonly string[] } {
  try {
    parseRules(input, 'fuzz')
    return { ok: true }
  } catch (error) {
    if (!(error instanceof RuleConfigError)) throw error
    return { ok: false, problems: error.problems }
  }
}

function checkProblems(input: unknown): void {
  const result = outcome(input)
  if (result.ok) return
  expect(result.problems.length).toBeGreaterThan(0)
  for (const line of result.problems) expect(line).toMatch(PROBLEM)
}

describe('rules validation over generated documents', () => {
  // Found by the mutation property below: the path read `domains[0]..descriptors`.
  it('names a domain whose descriptors are not a list by a plain path', () => {
    const document = { version: 1, rules: [], domains: [{ domain: 'd', descriptors: '' }] }
    expect(outcome(document)).toEqual({
      ok: false,
      problems: ['domains[0].descriptors: error loading config file: descriptors must be a list'],
    })
  })

  it('accepts every generated valid document', () => {
    fc.assert(
      fc.property(validDocument, (document) => {
        expect(outcome(document)).toEqual({ ok: true })
      }),
      { seed: 8, numRuns: 300 }
    )
  })

  it('throws only RuleConfigError, each problem led by a field path, on any JSON value', () => {
    fc.assert(fc.property(anyJson(10), checkProblems), { seed: 8, numRuns: 1_000 })
  }, 20_000)

  it('throws only RuleConfigError on arbitrary JSON shaped like a document', () => {
    const shaped = fc.record(
      { version: fc.oneof(fc.constant(1), anyJson(2)), rules: fc.array(anyJson(4)) },
      { requiredKeys: [] }
    )
    fc.assert(fc.property(shaped, checkProblems), { seed: 8, numRuns: 500 })
  })

  it('throws only RuleConfigError on valid documents with one field mutated', () => {
    let rejected = 0
    fc.assert(
      fc.property(mutatedDocument, (document) => {
        if (!outcome(document).ok) rejected++
        checkProblems(document)
      }),
      { seed: 8, numRuns: 800 }
    )
    // The mutations do reach validation errors, not only harmless fields.
    expect(rejected).toBeGreaterThan(400)
  }, 20_000)
})
