// The package build (`npm run build:lib`): tsc emits src/lib.ts and what it imports to lib/ as
// JavaScript with declarations; this script then makes the output load without a bundler's help.
//  - Relative imports get their file name (`./rules` -> `./rules/index.js`): Node's ESM loader and
//    a consumer's `moduleResolution: nodenext` require it, and the sources leave it out.
//  - `../rules.json` (the bundled default rules) becomes lib/default-rules.js, so that neither the
//    consumer's bundler nor Node needs to import JSON.
// Any relative import left pointing at no file fails the build.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '../..')
const out = join(root, 'lib')
const DEFAULT_RULES = 'default-rules.js'
/** `from '…'`, `import '…'` and `import('…')` with a relative specifier. */
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.\.?\/[^'"]*)\2/g

rmSync(out, { recursive: true, force: true })
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
const project = ['-p', join(root, 'tsconfig.build.json')]
// Declarations keep the JSDoc editors show; the JavaScript goes without comments, to halve the tarball.
execFileSync(process.execPath, [tsc, ...project, '--emitDeclarationOnly'], { stdio: 'inherit' })
execFileSync(process.execPath, [tsc, ...project, '--declaration', 'false', '--removeComments'], {
  stdio: 'inherit',
})

const rules: unknown = JSON.parse(readFileSync(join(root, 'rules.json'), 'utf8'))
writeFileSync(
  join(out, DEFAULT_RULES),
  `// rules.json as a module: the rules createApp() applies unless told otherwise.\nexport default ${JSON.stringify(rules, null, 2)};\n`
)

/**
 * The specifier, relative to `file`, of the emitted module a source import refers to.
 *
 * @param file - the emitted file holding the import
 * @param specifier - the import as the sources wrote it
 */
function resolveSpecifier(file: string, specifier: string): string {
  const isDeclaration = file.endsWith('.d.ts')
  const target = resolve(dirname(file), specifier)
  if (target === join(root, 'rules.json')) return toSpecifier(file, join(out, DEFAULT_RULES))
  const candidates = [`${target}.js`, join(target, 'index.js')]
  for (const candidate of candidates) {
    const exists = isDeclaration
      ? existsSync(candidate.replace(/\.js$/, '.d.ts'))
      : existsSync(candidate)
    if (exists) return toSpecifier(file, candidate)
  }
  throw new Error(`${relative(root, file)}: no emitted module for '${specifier}'`)
}

/**
 * A relative specifier from `file` to `target`, starting with `./` or `../`.
 *
 * @param file - the importing file
 * @param target - the imported file
 */
function toSpecifier(file: string, target: string): string {
  const path = relative(dirname(file), target).split('\\').join('/')
  return path.startsWith('.') ? path : `./${path}`
}

/**
 * Every emitted file under `dir`.
 *
 * @param dir - a directory of lib/
 */
function* emitted(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* emitted(path)
    else if (path.endsWith('.js') || path.endsWith('.d.ts')) yield path
  }
}

let files = 0
for (const file of emitted(out)) {
  const text = readFileSync(file, 'utf8')
  const rewritten = text.replace(
    SPECIFIER,
    (_, head: string, quote: string, specifier: string) =>
      `${head}${quote}${resolveSpecifier(file, specifier)}${quote}`
  )
  if (rewritten !== text) writeFileSync(file, rewritten)
  files += 1
}
console.log(`lib/: ${files} files, relative imports resolved`)
