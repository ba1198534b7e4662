// The package build (`npm run build:lib`): tsc emits src/lib.ts and what it imports to lib/ as
// JavaScript with declarations; this script then makes the output load without a bundler's help.
//  - Relative imports get their file name (`./rules` -> `./rules/index.js`): Node's ESM loader and
//    a consumer's `moduleResolution: nodenext` require it, and the sources leave it out.
//  - `../rules.json` (the bundled default rules) becomes lib/default-rules.js, so that neither the
//    consumer's bundler nor Node needs to import JSON.
//  - The command line (`npx edge-rate-limiter …`) is bundled last into lib/cli.js (`./cli.ts`).
// Any relative import left pointing at no file fails the build.
import { execFileSync } from 'node:child_process'
import { transformSync } from 'esbuild'
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'
import { buildCli } from './cli.ts'

const root = resolve(import.meta.dirname, '../..')
const out = join(root, 'lib')
const DEFAULT_RULES = 'default-rules.js'
/** `from '…'`, `import '…'` and `import('…')` with a relative specifier. */
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.\.?\/[^'"]*)\2/g

rmSync(out, { recursive: true, force: true })
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
const project = ['-p', join(root, 'tsconfig.build.json')]
// The declarations of the public modules keep the JSDoc editors show; the others, and the
// JavaScript, go without comments: the comments were two thirds of the packed declarations.
execFileSync(process.execPath, [tsc, ...project, '--emitDeclarationOnly'], { stdio: 'inherit' })
const bare = mkdtempSync(join(tmpdir(), 'lib-dts-'))
execFileSync(
  process.execPath,
  [tsc, ...project, '--emitDeclarationOnly', '--removeComments', '--outDir', bare],
  { stdio: 'inherit' }
)
const documented = publicDeclarations(['lib.d.ts', 'client/index.d.ts'])
for (const file of emitted(bare)) {
  const name = relative(bare, file)
  if (!documented.has(name)) copyFileSync(file, join(out, name))
}
rmSync(bare, { recursive: true, force: true })
execFileSync(process.execPath, [tsc, ...project, '--declaration', 'false', '--removeComments'], {
  stdio: 'inherit',
})

// The JSON Schema of rules documents, as the package ships it: without the indentation the
// repository's copy keeps for reading (the same document).
const schema: unknown = JSON.parse(readFileSync(join(root, 'rules.schema.json'), 'utf8'))
writeFileSync(join(out, 'rules.schema.json'), JSON.stringify(schema))

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
 * The declarations whose exports the package's entries re-export, following `export … from`
 * chains: what a consumer's editor shows documentation for.
 *
 * @param entries - the entry declarations, relative to lib/
 */
function publicDeclarations(entries: string[]): Set<string> {
  const found = new Set<string>()
  const pending = [...entries]
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (found.has(name)) continue
    found.add(name)
    const text = readFileSync(join(out, name), 'utf8')
    for (const [, specifier] of text.matchAll(/^export [^;]*? from '(\.\.?\/[^']+)'/gms)) {
      const target = resolve(dirname(join(out, name)), specifier!)
      const candidates = [`${target}.d.ts`, join(target, 'index.d.ts')]
      const hit = candidates.find((candidate) => existsSync(candidate))
      if (hit) pending.push(relative(out, hit))
    }
  }
  return found
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
  // The JavaScript without indentation and blank lines, its syntax shortened where the meaning
  // stays (names kept: stack traces read as the sources do): consumers bundle it, and it keeps
  // the package within its 150 kB.
  const shipped = file.endsWith('.js')
    ? transformSync(rewritten, {
        minifyWhitespace: true,
        minifySyntax: true,
        format: 'esm',
        target: 'es2024',
      }).code
    : rewritten
  if (shipped !== text) writeFileSync(file, shipped)
  files += 1
}
// A declaration no entry's types lead to is only weight: consumers import the entries alone.
const needed = new Set<string>()
const pending = ['lib.d.ts', 'client/index.d.ts'].map((name) => join(out, name))
for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
  if (needed.has(file)) continue
  needed.add(file)
  for (const [, , , specifier] of readFileSync(file, 'utf8').matchAll(SPECIFIER))
    pending.push(resolve(dirname(file), specifier!.replace(/\.js$/, '.d.ts')))
}
let pruned = 0
for (const file of [...emitted(out)]) {
  if (file.endsWith('.d.ts') && !needed.has(file)) {
    rmSync(file)
    pruned += 1
  }
}
// A module of types alone compiles to an empty file that no JavaScript imports (type imports
// are erased): a file in the package, and no code.
const imported = new Set<string>()
for (const file of emitted(out)) {
  if (!file.endsWith('.js')) continue
  for (const [, , , specifier] of readFileSync(file, 'utf8').matchAll(SPECIFIER))
    imported.add(resolve(dirname(file), specifier!))
}
let empty = 0
for (const file of [...emitted(out)]) {
  if (file.endsWith('.js') && readFileSync(file, 'utf8').trim() === '' && !imported.has(file)) {
    rmSync(file)
    empty += 1
  }
}
console.log(
  `lib/: ${files} files, relative imports resolved; ${pruned} declarations no entry needs and ${empty} empty modules left out`
)
const cliBytes = await buildCli(root, out)
console.log(`lib/cli.js: the command line, ${cliBytes} bytes`)
