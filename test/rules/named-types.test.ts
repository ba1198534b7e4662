import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import type { CheckedRulesDocument, RulesDocument } from '../../src/rules/document'
import { RulesDocumentSchema } from '../../src/rules/schema'
import { named } from '../../src/rules/schema-parts'
import rulesJson from '../../rules.json'

// The named types of the rules document are tied to its schema by named(): tsc refuses a schema
// whose inferred input or output differs from them in either direction. These cases check that
// the tie holds (each @ts-expect-error fails the typecheck if tsc stops refusing it).
describe('named types for the rules document', () => {
  const schema = v.object({ a: v.string(), b: v.optional(v.number(), 1) })

  it('accepts a schema whose types are exactly the named ones', () => {
    const tied = named<{ a: string; b?: number }, { a: string; b: number }>()(schema)
    expect(v.parse(tied, { a: 'x' })).toEqual({ a: 'x', b: 1 })
  })

  it('refuses named types that say less, or more, than the schema', () => {
    // @ts-expect-error: the named input lacks `b`, which the schema accepts
    named<{ a: string }, { a: string; b: number }>()(schema)
    // @ts-expect-error: the named output has `b` optional, the schema always fills it in
    named<{ a: string; b?: number }, { a: string; b?: number }>()(schema)
    // @ts-expect-error: the named input has a field the schema refuses
    named<{ a: string; b?: number; c: string }, { a: string; b: number }>()(schema)
    expect(true).toBe(true)
  })

  it('types the documents the schema validates', () => {
    const written: RulesDocument = {
      version: 1,
      rules: [{ id: 'r', key: ['ip'], algorithm: 'concurrency', limit: 2, queue: 1 }],
    }
    const checked: CheckedRulesDocument = v.parse(RulesDocumentSchema, written)
    expect(checked.rules[0]).toMatchObject({
      algorithm: 'concurrency',
      maxWait: 10_000,
      lease: 60_000,
    })
    expect(v.parse(RulesDocumentSchema, rulesJson).rules).toHaveLength(rulesJson.rules.length)
  })
})
