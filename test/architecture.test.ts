import { describe, expect, it } from 'vitest'

// Every source file's text, through Vite, so the rule is checked inside workerd too.
const sources = import.meta.glob<string>('../src/**/*.ts', {
  query: '?raw',
  import: 'default',
  eager: true,
})

// The lint rules, whose tables must say what this test says.
const eslintConfig = Object.values(
  import.meta.glob<string>('../eslint.config.js', { query: '?raw', import: 'default', eager: true })
)[0]!

// The picture of http/'s rooms that docs/architecture.md shows.
const roomsPicture = Object.values(
  import.meta.glob<string>('../docs/http-rooms.svg', {
    query: '?raw',
    import: 'default',
    eager: true,
  })
)[0]!

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

/**
 * The rooms of src/http/ and the other rooms each may import from (besides itself): admin ->
 * request -> observe -> shared, admin -> pages. The pages import nothing but their own files.
 */
const HTTP_ROOMS: Record<string, string[]> = {
  admin: ['request', 'observe', 'pages', 'shared'],
  request: ['observe', 'shared'],
  observe: ['shared'],
  pages: [],
  shared: [],
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

/** The room of a file under src/http/ (its folder there), '' for one right in src/http/. */
function roomOf(path: string): string {
  const parts = path.replace(/^\.\.\/src\/http\//, '').split('/')
  return parts.length > 1 ? parts[0]! : ''
}

/**
 * The imports by which files of one room of http/ reach a room of http/ it may not use (or, from
 * pages/, anything outside pages/).
 *
 * @param files - source texts by path (`../src/http/request/charge.ts`)
 * @param room - the room whose files are checked
 */
function roomCrossings(files: Record<string, string>, room: string): string[] {
  const offending: string[] = []
  for (const [path, text] of Object.entries(files)) {
    if (!path.startsWith('../src/http/') || roomOf(path) !== room) continue
    for (const target of imports(text)) {
      const resolved = target.startsWith('.') ? resolve(path, target) : undefined
      if (room === 'pages') {
        if (!resolved?.startsWith('http/pages/')) offending.push(`${path} imports ${target}`)
        continue
      }
      if (!resolved?.startsWith('http/')) continue
      const targetRoom = resolved.split('/')[1]!
      if (targetRoom !== room && !HTTP_ROOMS[room]!.includes(targetRoom))
        offending.push(`${path} imports ${target}`)
    }
  }
  return offending
}

/** The object literal `const NAME = { … }` of eslint.config.js, read as data. */
function eslintTable(name: string): Record<string, string[]> {
  const found = new RegExp(`^const ${name} = (\\{[\\s\\S]*?^\\})`, 'm').exec(eslintConfig)
  if (!found) throw new Error(`eslint.config.js has no const ${name}`)
  const json = found[1]!
    .replace(/\/\/.*$/gm, '')
    .replace(/'/g, '"')
    .replace(/^(\s*)(\w+):/gm, '$1"$2":')
    .replace(/,(\s*[\]}])/g, '$1')
  return JSON.parse(json) as Record<string, string[]>
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

  it('every file of http/ is in one of its rooms', () => {
    const homeless = Object.keys(sources).filter(
      (path) => path.startsWith('../src/http/') && !(roomOf(path) in HTTP_ROOMS)
    )
    expect(Object.keys(sources).some((path) => path.startsWith('../src/http/request/'))).toBe(true)
    expect(homeless).toEqual([])
  })

  it.each(Object.keys(HTTP_ROOMS))('http/%s/ imports only from the rooms it may use', (room) => {
    expect(roomCrossings(sources, room)).toEqual([])
  })

  it('the room check sees a forbidden import, and lets an allowed one be', () => {
    const files = {
      '../src/http/request/charge.ts': "import { adminApi } from '../admin/api'\n",
      '../src/http/observe/record.ts': "import type { Charged } from '../request/charge'\n",
      '../src/http/shared/context.ts': "export { observe } from '../observe/record'\n",
      '../src/http/pages/operator.ts': "import { HttpError } from '../../errors'\n",
      '../src/http/admin/api.ts':
        "import { clientAddress } from '../request/facts'\nimport { keyOf } from './access'\n",
    }
    expect(Object.keys(HTTP_ROOMS).flatMap((room) => roomCrossings(files, room))).toEqual([
      '../src/http/request/charge.ts imports ../admin/api',
      '../src/http/observe/record.ts imports ../request/charge',
      '../src/http/pages/operator.ts imports ../../errors',
      '../src/http/shared/context.ts imports ../observe/record',
    ])
  })

  it('docs/http-rooms.svg draws every file of each room and every arrow between rooms', () => {
    const drawn: Record<string, string[]> = {}
    for (const [, room, body] of roomsPicture.matchAll(/<g id="room-(\w+)">([\s\S]*?)<\/g>/g))
      drawn[room!] = [...body!.matchAll(/>([\w.-]+\.ts)</g)].map((m) => m[1]!).sort()
    const files: Record<string, string[]> = {}
    const arrows = new Set<string>()
    for (const [path, text] of Object.entries(sources)) {
      if (!path.startsWith('../src/http/')) continue
      const room = roomOf(path)
      ;(files[room] ??= []).push(path.split('/').pop()!)
      for (const target of imports(text)) {
        const resolved = target.startsWith('.') ? resolve(path, target) : ''
        const to = resolved.startsWith('http/') ? resolved.split('/')[1]! : room
        if (to !== room) arrows.add(`${room} -> ${to}`)
      }
    }
    for (const list of Object.values(files)) list.sort()
    expect(drawn).toEqual(files)
    const drawnArrows = [...roomsPicture.matchAll(/<g id="arrow-(\w+)-(\w+)">/g)]
    expect(drawnArrows.map(([, from, to]) => `${from} -> ${to}`).sort()).toEqual([...arrows].sort())
  })

  it('eslint.config.js enforces the same layers and rooms', () => {
    expect(eslintTable('ALLOWED')).toEqual(ALLOWED)
    expect(eslintTable('HTTP_ROOMS')).toEqual(HTTP_ROOMS)
  })
})
