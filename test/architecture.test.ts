import { describe, expect, it } from 'vitest'

// Every source file's text, through Vite, so the rule is checked inside workerd too.
const sources = import.meta.glob<string>('../src/**/*.ts', {
  query: '?raw',
  import: 'default',
  eager: true,
})

/** The layer of a source file: its folder under src/, or "root" for src/*.ts. */
function layerOf(path: string): string {
  const parts = path.replace(/^\.\.\/src\//, '').split('/')
  return parts.length > 1 ? parts[0]! : 'root'
}

/** Where each layer may import from (besides itself and the shared types and errors). */
const ALLOWED: Record<string, string[]> = {
  algorithms: [],
  rules: ['algorithms'],
  live: [],
  // `log` (src/log.ts) reads the clock for its budget: not for the pure layers.
  limiter: ['algorithms', 'live', 'log'],
  provider: ['rules', 'algorithms', 'log'],
  http: ['rules', 'limiter', 'live', 'provider', 'algorithms', 'log'],
}

/** The shared vocabulary every layer may use: `src/types.ts` and `src/errors.ts`. */
const SHARED = new Set(['types.ts', 'errors.ts'])

/** The file an import names, relative to src/ (`rules/glob`), resolving `./` and `../`. */
function resolve(from: string, target: string): string {
  const parts = from
    .replace(/^\.\.\/src\//, '')
    .split('/')
    .slice(0, -1)
  for (const segment of target.split('/')) {
    if (segment === '..') parts.pop()
    else if (segment !== '.') parts.push(segment)
  }
  return parts.join('/')
}

function imports(text: string): string[] {
  return [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/gm)].map(
    (m) => m[1]!
  )
}

describe('architecture', () => {
  it('finds the sources', () => {
    expect(Object.keys(sources).length).toBeGreaterThan(15)
  })

  it.each(Object.keys(ALLOWED))('%s/ imports only from the layers below it', (layer) => {
    const offending: string[] = []
    for (const [path, text] of Object.entries(sources)) {
      if (layerOf(path) !== layer) continue
      for (const target of imports(text)) {
        if (!target.startsWith('.')) continue
        const resolved = resolve(path, target)
        if (SHARED.has(`${resolved}.ts`)) continue
        const first = resolved.split('/')[0]!
        // `../rules` is the folder's index; `../app` is a file at the root of src/.
        const targetLayer = resolved.includes('/') || first in ALLOWED ? first : 'root'
        // A root file a layer may use (`log`) is named in its list as it is.
        const allowed = ALLOWED[layer]!
        if (targetLayer !== layer && !allowed.includes(targetLayer) && !allowed.includes(resolved))
          offending.push(`${path} imports ${target}`)
      }
    }
    expect(offending).toEqual([])
  })

  it.each(['algorithms', 'rules', 'live'])(
    '%s/ is pure: no hono, no cloudflare:*, no clock',
    (layer) => {
      const offending: string[] = []
      for (const [path, text] of Object.entries(sources)) {
        if (layerOf(path) !== layer) continue
        for (const target of imports(text))
          if (target === 'hono' || target.startsWith('hono/') || target.startsWith('cloudflare:'))
            offending.push(`${path} imports ${target}`)
        if (/\bDate\.now\(|\bperformance\.now\(|\bfetch\(/.test(text))
          offending.push(`${path} reads the clock or does I/O`)
      }
      expect(offending).toEqual([])
    }
  )

  it('client/ imports nothing but its own files: no package, no other layer, no runtime module', () => {
    const offending: string[] = []
    for (const [path, text] of Object.entries(sources)) {
      if (layerOf(path) !== 'client') continue
      for (const target of imports(text))
        if (!target.startsWith('./')) offending.push(`${path} imports ${target}`)
      if (/\bimport\s*\(/.test(text)) offending.push(`${path} imports dynamically`)
    }
    expect(Object.keys(sources).some((path) => layerOf(path) === 'client')).toBe(true)
    expect(offending).toEqual([])
  })
})
