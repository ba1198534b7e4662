/**
 * @module tools/docs/library-path
 * Prints the library path as a bash script for `.ci/library-path.sh` to run: one step per fenced
 * block marked with an HTML comment, page after page in the order given (the README's
 * walk-through, then its continuation in docs/library.md), each page's blocks in its order, each
 * block's text as written (quoted heredocs: nothing in it is expanded). Each step is told where
 * its block is, as `page:line`.
 *
 *   <!-- library-path: file <path> -->    the block is the file <path> of the new project
 *   <!-- library-path: run in the clone --> run it in a clone of this repository
 *   <!-- library-path: run -->            run it in the new project
 *   <!-- library-path: fail -->           run it in the new project: it must exit non-zero
 *   <!-- library-path: start -->          start it in the new project, in the background
 *
 * Usage: node tools/docs/library-path.ts [page...]   (default: README.md docs/library.md)
 */
import { readFileSync } from 'node:fs'
import { codeBlocks } from './markdown.ts'

const files = process.argv.length > 2 ? process.argv.slice(2) : ['README.md', 'docs/library.md']
const PREFIX = 'library-path:'
const END = '__LIBRARY_PATH_BLOCK__'
const steps: string[] = []
for (const file of files) {
  const before = steps.length
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
    const at = `${file}:${block.line}`
    if (call === undefined) throw new Error(`${at}: unknown marker "${block.marker}"`)
    if (block.text.split('\n').includes(END)) throw new Error(`${at}: holds ${END}`)
    steps.push(`# ${at}\n${call} ${JSON.stringify(at)} <<'${END}'\n${block.text}${END}`)
  }
  if (steps.length === before) throw new Error(`${file}: no block marked "${PREFIX}"`)
}
console.log(steps.join('\n'))
