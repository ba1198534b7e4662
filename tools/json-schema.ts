/**
 * @module tools/json-schema
 * The JSON Schema of the rules document, generated from the very schema the Worker validates
 * with, so editors complete and check rules.json without a second definition to keep in step.
 */
import { toJsonSchema } from '@valibot/to-json-schema'
import { RulesDocumentSchema } from '../src/rules/schema'

/** Where rules.json points its `$schema`. */
export const SCHEMA_FILE = 'rules.schema.json'

/**
 * The JSON Schema (draft-07) of a rules document as it is written. Checks the schema cannot
 * express (duration syntax, CIDR ranges, cross-rule references) stay with the Worker's
 * validation and `npm run rules -- validate`.
 */
export function rulesJsonSchema(): Record<string, unknown> {
  const schema = toJsonSchema(RulesDocumentSchema, { typeMode: 'input', errorMode: 'ignore' })
  return {
    ...schema,
    title: 'edge-rate-limiter rules document',
    description:
      'Rules for edge-rate-limiter: rules.json, or the `rules` key of the RULES KV namespace.',
  }
}
