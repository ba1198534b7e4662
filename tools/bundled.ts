/**
 * @module tools/bundled
 * Runs a tool's TypeScript as one esbuild bundle: module boundaries and tsx's name helpers off
 * the hot path (the scale simulator's CI runs took 13 s bundled against 24 s through tsx's loader).
 * The bundle is kept under `node_modules/.cache` while the run lasts, so a stack trace names a
 * file that exists; a file per run, so that two runs started together do not load each other's
 * half-written bundle.
 */
import { build } from 'esbuild'
import { rmSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'

/**
 * Bundles `entry` and runs its exported `main` with the command line's arguments.
 *
 * @param entry - the entry module's path; it exports `main(argv): Promise<number>`
 * @param name - the cache folder's name
 * @param alias - modules to replace, by specifier (as esbuild's `alias`)
 * @returns the exit status `main` returns
 */
export async function runBundled(
  entry: string,
  name: string,
  alias: Record<string, string> = {}
): Promise<number> {
  const cache = fileURLToPath(new URL('../node_modules/.cache/', import.meta.url))
  const outfile = `${cache}${name}/main-${process.pid}.mjs`
  process.on('exit', () => rmSync(outfile, { force: true }))
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    alias,
    outfile,
    logLevel: 'warning',
  })
  const { main } = (await import(pathToFileURL(outfile).href)) as {
    main: (argv: string[]) => Promise<number>
  }
  return main(process.argv.slice(2))
}
