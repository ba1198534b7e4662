/**
 * @module tools/build/cli
 * The package's command line, `lib/cli.js` (its `bin`), bundled by esbuild from
 * `tools/cli/main.ts` after tsc has emitted lib/. What the command line takes from src/ stays an
 * import of the module tsc emitted (`../src/rules` -> `./rules/index.js`), so the package holds
 * that code once; the command line's own files are bundled in. A package it imports must be one
 * the package depends on (`dependencies`, `peerDependencies`), or `wrangler`, which the preflight
 * takes from the user's project: any other would be missing where the package is installed, and
 * fails this build by name.
 */
import { build, type Plugin } from 'esbuild'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { join, relative, resolve } from 'node:path'

/** Packages the command line may import that the package does not depend on. */
const FROM_THE_PROJECT = ['wrangler']

/**
 * Bundles the command line into `<out>/cli.js`.
 *
 * @param root - the repository
 * @param out - lib/, already emitted by tsc
 * @returns the bundle's size in bytes
 */
export async function buildCli(root: string, out: string): Promise<number> {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>
    peerDependencies?: Record<string, string>
  }
  const allowed = new Set([
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
    ...FROM_THE_PROJECT,
  ])
  const outfile = join(out, 'cli.js')
  const src = join(root, 'src')
  const linkToLib: Plugin = {
    name: 'link-to-lib',
    setup(on) {
      // A rehearsal's chart draws with echarts, which the package does not bring: the command
      // line's import of it fails at run time, and the rehearsal leaves minutes.svg out and says
      // so (tools/rehearse/command.ts).
      on.onResolve({ filter: /^\.\/chart$/ }, ({ resolveDir }) =>
        resolveDir.endsWith(join('tools', 'rehearse'))
          ? { path: './rehearse-chart-not-packaged.js', external: true }
          : undefined
      )
      on.onResolve({ filter: /^\.\.?\// }, ({ path, resolveDir }) => {
        const target = resolve(resolveDir, path)
        if (!target.startsWith(`${src}/`)) return undefined
        const emitted = [`${target}.js`, join(target, 'index.js')]
          .map((file) => join(out, relative(src, file)))
          .find((file) => existsSync(file))
        if (!emitted)
          return {
            errors: [
              {
                text: `${relative(root, target)} is not in lib/: tsc emits only what src/lib.ts imports`,
              },
            ],
          }
        const specifier = `./${relative(out, emitted).split('\\').join('/')}`
        return { path: specifier, external: true }
      })
      on.onResolve({ filter: /^[^./]/ }, ({ path }) => {
        if (path.startsWith('node:') || builtinModules.includes(path))
          return { path, external: true }
        const name = path.startsWith('@')
          ? path.split('/').slice(0, 2).join('/')
          : path.split('/')[0]!
        if (allowed.has(name)) return { path, external: true }
        return {
          errors: [
            {
              text: `the command line imports "${name}", which the package does not depend on: add it to "dependencies" (it is then installed with the package) or keep it out of tools/cli/`,
            },
          ],
        }
      })
    },
  }
  await build({
    entryPoints: [join(root, 'tools/cli/main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    banner: { js: '#!/usr/bin/env node' },
    // Minified whole, names too (unlike the rest of lib/, whose names stack traces show): the
    // command line prints messages, not stack traces, and the package stays within its budget.
    minify: true,
    plugins: [linkToLib],
    logLevel: 'warning',
  })
  return statSync(outfile).size
}
