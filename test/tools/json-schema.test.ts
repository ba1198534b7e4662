import { describe, expect, it } from 'vitest'
import bundled from '../../rules.json'
import committed from '../../rules.schema.json'
import { rulesJsonSchema, SCHEMA_FILE } from '../../tools/json-schema'

describe('rules.schema.json', () => {
  it('is what the validation schema generates (run `npm run rules -- schema > rules.schema.json`)', () => {
    expect(committed).toEqual(rulesJsonSchema())
  })

  it('is what rules.json points at', () => {
    expect(bundled.$schema).toBe(`./${SCHEMA_FILE}`)
  })

  it('describes the document: its fields, and no others', () => {
    const schema = rulesJsonSchema() as {
      properties: Record<string, unknown>
      required: string[]
      additionalProperties: boolean
    }
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(['version', 'mode', 'lists', 'jwt', 'rules'])
    )
    expect(schema.required).toEqual(['version', 'rules'])
    expect(schema.additionalProperties).toBe(false)
  })
})
