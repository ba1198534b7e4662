/**
 * @module tools/scale/cli
 * `npm run simulate:scale -- [options]`: the entry. It bundles the simulator with the limiter's
 * modules, unchanged, into one file with esbuild, and runs that. The limiter's modules import
 * `cloudflare:workers`, which Node does not have: the bundle aliases it to the simulator's shim
 * (`workers-shim.ts`). One module keeps module boundaries and tsx's name helpers off the hot
 * path: CI's `--check` (mostly 10 and 100 isolates) takes 13 s against 24 s compiled file by file
 * through tsx's loader hook. At 3,000 isolates, where the time goes to memory (each request
 * touches a cold isolate's state), it changes little. The bundle is kept under
 * `node_modules/.cache` while the run lasts, so a stack trace names a file that exists; a file
 * per run, so that two runs started together do not load each other's half-written bundle.
 */
import { build } from 'esbuild'
import { rmSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url))
const outfile = here(`../../node_modules/.cache/simulate-scale/main-${process.pid}.mjs`)
process.on('exit', () => rmSync(outfile, { force: true }))

await build({
  entryPoints: [here('./main.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  alias: { 'cloudflare:workers': here('./workers-shim.ts') },
  outfile,
  logLevel: 'warning',
})
const { main } = (await import(pathToFileURL(outfile).href)) as typeof import('./main')
process.exitCode = await main(process.argv.slice(2))
