/**
 * @module tools/preflight
 * `npm run preflight -- [options]`: the preflight (see `tools/cli/preflight.ts`) on this
 * repository's wrangler.toml and rules.json, or the files named.
 */
import { runPreflight } from './cli/preflight'

process.exitCode = await runPreflight(process.argv.slice(2), 'npm run preflight --')
