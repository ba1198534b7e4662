/**
 * @module tools/docs/check
 * `npm run docs:check`: the README and every page under docs/ checked against the code, so the
 * docs cannot drift from it:
 *  - every `json` block parses; a rules document (it has `version` or a `rules` list) or a single
 *    rule (it has `id` and `algorithm`) is validated by the project's own validator, a single
 *    rule as a document holding it alone; `jsonl` blocks parse line by line;
 *  - every `yaml` block with a `domain` is an envoyproxy/ratelimit configuration, checked as
 *    `rules validate` checks one;
 *  - every `ts` block is a module type-checked under strict, with `edge-rate-limiter` and
 *    `edge-rate-limiter/client` resolved to this repository's sources;
 *  - every relative link and image names a file that exists, and a heading there when it has a
 *    `#fragment`.
 * Prints what it checked; exits 1 listing every problem as `page:line: problem`.
 */
import { mkdtempSync, readdirSync, readFileSync, existsSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { parse as parseYaml } from 'yaml'
import { RuleConfigError } from '../../src/errors'
import { compileEnvoy, parseRules } from '../../src/rules'
import { anchors, codeBlocks, links, type CodeBlock } from './markdown'

const root = resolve(import.meta.dirname, '../..')
const problems: string[] = []
const counts = { documents: 0, rules: 0, json: 0, envoy: 0, typescript: 0, links: 0 }

/** The README and every Markdown page under docs/. */
function pages(): string[] {
  const found = ['README.md']
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith('.md')) found.push(path)
    }
  }
  walk('docs')
  return found
}

function checkJson(page: string, block: CodeBlock): void {
  const at = `${page}:${block.line}`
  let value: unknown
  try {
    value = JSON.parse(block.text)
  } catch (error) {
    problems.push(`${at}: not JSON: ${(error as Error).message}`)
    return
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    counts.json += 1
    return
  }
  const fields = value as Record<string, unknown>
  const isDocument = 'version' in fields || Array.isArray(fields.rules)
  const isRule = !isDocument && 'id' in fields && 'algorithm' in fields
  if (!isDocument && !isRule) {
    counts.json += 1
    return
  }
  try {
    parseRules(isDocument ? value : { version: 1, rules: [value] }, at)
    counts[isDocument ? 'documents' : 'rules'] += 1
  } catch (error) {
    if (!(error instanceof RuleConfigError)) throw error
    for (const problem of error.problems) problems.push(`${at}: ${problem}`)
  }
}

function checkJsonLines(page: string, block: CodeBlock): void {
  block.text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .forEach((line, i) => {
      try {
        JSON.parse(line)
        counts.json += 1
      } catch (error) {
        problems.push(`${page}:${block.line + 1 + i}: not JSON: ${(error as Error).message}`)
      }
    })
}

function checkYaml(page: string, block: CodeBlock): void {
  let config: unknown
  try {
    config = parseYaml(block.text, { version: '1.1', merge: true })
  } catch (error) {
    problems.push(`${page}:${block.line}: not YAML: ${(error as Error).message.split('\n')[0]}`)
    return
  }
  if (typeof config !== 'object' || config === null || !('domain' in config)) return
  const compiled = compileEnvoy([config], () => ({ file: `${page}:${block.line}` }))
  problems.push(...compiled.problems)
  counts.envoy += 1
}

/** Type-checks every TypeScript block as a module of its own, in one program. */
function checkTypeScript(blocks: { page: string; block: CodeBlock }[]): void {
  if (blocks.length === 0) return
  const dir = mkdtempSync(join(root, 'node_modules', '.docs-check-'))
  try {
    const files = blocks.map(({ page, block }, i) => {
      const file = join(dir, `${page.replace(/[^A-Za-z0-9]/g, '_')}_${block.line}_${i}.ts`)
      writeFileSync(file, block.text)
      return { file, page, block }
    })
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2024,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2024.d.ts'],
      types: [join(root, 'worker-configuration.d.ts')],
      strict: true,
      noUncheckedIndexedAccess: true,
      isolatedModules: true,
      moduleDetection: ts.ModuleDetectionKind.Force,
      noEmit: true,
      skipLibCheck: true,
      resolveJsonModule: true,
      baseUrl: root,
      paths: {
        'edge-rate-limiter': ['src/lib.ts'],
        'edge-rate-limiter/client': ['src/client/index.ts'],
      },
    }
    const program = ts.createProgram(
      files.map(({ file }) => file),
      options
    )
    for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
      const source = files.find(({ file }) => file === diagnostic.file?.fileName)
      if (!source) {
        problems.push(`TypeScript: ${message}`)
        continue
      }
      const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start ?? 0)
      problems.push(`${source.page}:${source.block.line + 1 + line}: ${message}`)
    }
    counts.typescript += blocks.length
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function checkLinks(page: string, text: string): void {
  for (const { href, line } of links(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue // another site: no network here
    counts.links += 1
    const [path = '', fragment] = href.split('#')
    const target = path === '' ? join(root, page) : resolve(dirname(join(root, page)), path)
    if (!existsSync(target)) {
      problems.push(`${page}:${line}: ${href}: no such file`)
      continue
    }
    if (fragment === undefined || !target.endsWith('.md')) continue
    if (!anchors(readFileSync(target, 'utf8')).has(decodeURIComponent(fragment)))
      problems.push(
        `${page}:${line}: ${href}: no heading "#${fragment}" in ${relative(root, target)}`
      )
  }
}

const typescript: { page: string; block: CodeBlock }[] = []
const checked = pages()
for (const page of checked) {
  const text = readFileSync(join(root, page), 'utf8')
  for (const block of codeBlocks(text)) {
    if (block.lang === 'json') checkJson(page, block)
    else if (block.lang === 'jsonl') checkJsonLines(page, block)
    else if (block.lang === 'yaml' || block.lang === 'yml') checkYaml(page, block)
    else if (block.lang === 'ts' || block.lang === 'typescript') typescript.push({ page, block })
  }
  checkLinks(page, text)
}
checkTypeScript(typescript)

console.log(
  `${checked.length} pages: ${counts.documents} rules documents and ${counts.rules} rules validated, ` +
    `${counts.json} other JSON values parsed, ${counts.envoy} Envoy configurations checked, ` +
    `${counts.typescript} TypeScript blocks type-checked, ${counts.links} links followed`
)
if (problems.length > 0) {
  console.error(problems.join('\n'))
  console.error(`${problems.length} problems in the docs`)
  process.exitCode = 1
}
