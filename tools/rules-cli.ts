/**
 * @module tools/rules-cli
 * `npm run rules -- <command>`: the rules command line inside the repository (see
 * `tools/cli/rules.ts`), with `schema` generated from the validation schema, as
 * `rules.schema.json` is.
 */
import { runRules } from './cli/rules'
import { rulesJsonSchema } from './json-schema'

process.exitCode = await runRules(process.argv.slice(2), {
  program: 'npm run rules --',
  schema: rulesJsonSchema,
})
