/**
 * @module tools/fleet/cli
 * `npm run fleet -- [options]`: the entry. As `tools/scale/cli.ts` does, it bundles the harness
 * (and the simulator `--compare` runs, with the limiter's modules it imports) into one file with
 * esbuild, the simulator's shim standing for `cloudflare:workers`, and runs that. Packages
 * (Miniflare) stay outside the bundle.
 */
import { build } from 'esbuild'
import { rmSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url))
const outfile = here(`../../node_modules/.cache/fleet/main-${process.pid}.mjs`)
process.on('exit', () => rmSync(outfile, { force: true }))

await build({
  entryPoints: [here('./main.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  packages: 'external',
  alias: { 'cloudflare:workers': here('../scale/workers-shim.ts') },
  outfile,
  logLevel: 'warning',
})
const { main } = (await import(pathToFileURL(outfile).href)) as typeof import('./main')
process.exitCode = await main(process.argv.slice(2), here('../..'))
