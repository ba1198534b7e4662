/**
 * @module tools/docs/library-path
 * Prints the README's library path as a bash script for `.ci/library-path.sh` to run: one step
 * per fenced block marked with an HTML comment, in the README's order, each block's text as
 * written (quoted heredocs: nothing in it is expanded).
 *
 *   <!-- library-path: file <path> -->    the block is the file <path> of the new project
 *   <!-- library-path: run in the clone --> run it in a clone of this repository
 *   <!-- library-path: run -->            run it in the new project
 *   <!-- library-path: fail -->           run it in the new project: it must exit non-zero
 *   <!-- library-path: start -->          start it in the new project, in the background
 *
 * Usage: node tools/docs/library-path.ts [README.md]
 */
import { readFileSync } from 'node:fs'
import { codeBlocks } from './markdown.ts'

const file = process.argv[2] ?? 'README.md'
const PREFIX = 'library-path:'
const steps: string[] = []
for (const block of codeBlocks(readFileSync(file, 'utf8'))) {
  if (!block.marker?.startsWith(PREFIX)) continue
  const [verb = '', ...rest] = block.marker.slice(PREFIX.length).trim().split(/\s+/)
  const arg = rest.join(' ')
  const call =
    verb === 'file' && arg !== ''
      ? `step_file ${JSON.stringify(arg)}`
      : verb === 'run' && arg === 'in the clone'
        ? 'step_run clone'
        : verb === 'run' && arg === ''
          ? 'step_run app'
          : verb === 'fail' && arg === ''
            ? 'step_fail'
            : verb === 'start' && arg === ''
              ? 'step_start'
              : undefined
  if (call === undefined) throw new Error(`${file}:${block.line}: unknown marker "${block.marker}"`)
  const end = '__README_BLOCK__'
  if (block.text.split('\n').includes(end)) throw new Error(`${file}:${block.line}: holds ${end}`)
  steps.push(`# ${file}:${block.line}\n${call} ${block.line} <<'${end}'\n${block.text}${end}`)
}
if (steps.length === 0) throw new Error(`${file}: no block marked "${PREFIX}"`)
console.log(steps.join('\n'))
