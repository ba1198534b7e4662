// The package's own README (`npm pack`'s prepack and postpack). npm ships the README.md at the
// package's root, and the registry's page shows it where relative links lead nowhere; the
// repository's README is also longer than the package's size budget allows. So `prepack` puts
// docs/package/README.md there, every relative link made absolute against the repository named
// in package.json, and keeps the repository's README aside; `postpack` (`--restore`) puts that
// back. A README kept aside by a pack that stopped half-way is never overwritten: the next pack,
// or `--restore`, brings it back.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { withAbsoluteLinks } from '../docs/markdown.ts'

const root = resolve(import.meta.dirname, '../..')
const readme = join(root, 'README.md')
const kept = join(root, 'node_modules/.cache/edge-rate-limiter/README.md')
const source = join(root, 'docs/package/README.md')

if (process.argv.includes('--restore')) {
  if (existsSync(kept)) renameSync(kept, readme)
} else {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    repository?: string
  }
  const name = /^github:([\w.-]+\/[\w.-]+)$/.exec(manifest.repository ?? '')?.[1]
  if (!name) throw new Error('package.json: "repository" must be "github:<owner>/<name>"')
  const repository = `https://github.com/${name}`
  const absolute = (href: string): string => {
    const [path = '', fragment] = href.split('#')
    const inRepository = relative(root, resolve(dirname(source), path))
      .split('\\')
      .join('/')
    if (!existsSync(join(root, inRepository)))
      throw new Error(`docs/package/README.md: ${href}: no such file in the repository`)
    return `${repository}/blob/main/${inRepository}${fragment === undefined ? '' : `#${fragment}`}`
  }
  if (!existsSync(kept)) {
    mkdirSync(dirname(kept), { recursive: true })
    copyFileSync(readme, kept)
  }
  writeFileSync(readme, withAbsoluteLinks(readFileSync(source, 'utf8'), absolute))
}
