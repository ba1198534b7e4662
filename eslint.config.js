// @ts-check
/**
 * ESLint for src, test, tools and bench: no unused code, no import cycle, and the layer rules
 * that test/architecture.test.ts checks (imports go http -> rules/limiter -> algorithms,
 * algorithms/, rules/ and live/ stay pure, client/ imports nothing but itself, and inside http/
 * imports go admin -> request -> observe -> shared, with pages/ on its own).
 */
import js from '@eslint/js'
import { createNodeResolver, importX } from 'eslint-plugin-import-x'
import { defineConfig } from 'eslint/config'
import tseslint from 'typescript-eslint'

/** The folders under src/; anything else there (app, index, lib) is the root. */
const LAYERS = ['algorithms', 'rules', 'live', 'limiter', 'provider', 'http']

/** Where each layer may import from besides itself and src/types, src/errors (as the test says). */
const ALLOWED = {
  algorithms: [],
  rules: ['algorithms'],
  live: [],
  // `log` (src/log.ts) reads the clock for its budget: not for the pure layers.
  limiter: ['algorithms', 'live', 'log'],
  provider: ['rules', 'algorithms', 'log'],
  http: ['rules', 'limiter', 'live', 'provider', 'algorithms', 'log'],
}

/**
 * The rooms of src/http/ and the other rooms each may import from (besides itself): the admin API
 * uses request-path pieces (facts, claims, the bearer check), observability (key hashes, the live
 * view) and the pages it serves; the request path hands its decisions to observability; every
 * room may use shared/ (settings, bindings, the decision record), which uses no other room; the
 * pages use nothing but their own files. test/architecture.test.ts holds the same table.
 */
const HTTP_ROOMS = {
  admin: ['request', 'observe', 'pages', 'shared'],
  request: ['observe', 'shared'],
  observe: ['shared'],
  pages: [],
  shared: [],
}

/** Layers that must not touch the runtime, the web framework or the clock. */
const PURE = ['algorithms', 'rules', 'live']

/**
 * The `no-restricted-imports` patterns for a file `depth` folders below src/ in `layer`: a
 * relative import that climbs to src/ must land in the layer itself, a layer it may use, or
 * the shared types and errors.
 */
function layerPatterns(layer, depth) {
  const allowed = ['types', 'errors', layer, ...ALLOWED[layer]].join('|')
  const patterns = [
    {
      regex: `^(\\.\\./){${depth}}(?!(${allowed})(/|$))`,
      message: `${layer}/ may import only from ${[...ALLOWED[layer], 'types', 'errors'].join(', ')} (see test/architecture.test.ts).`,
    },
  ]
  if (PURE.includes(layer))
    patterns.push({
      regex: '^(hono(/.*)?|cloudflare:.*)$',
      message: `${layer}/ is pure: no hono, no cloudflare:* (see test/architecture.test.ts).`,
    })
  return patterns
}

/** One config block per layer and depth (src/rules/envoy/ is one deeper than src/rules/). */
const layerRules = LAYERS.flatMap((layer) =>
  [1, 2].map((depth) => ({
    files: [`src/${layer}/${'*/'.repeat(depth - 1)}*.ts`],
    rules: { 'no-restricted-imports': ['error', { patterns: layerPatterns(layer, depth) }] },
  }))
)

/**
 * The `no-restricted-imports` patterns for a file right in src/http/<room>/: the layer's patterns,
 * and an import that climbs to src/http/ must land in the room itself or a room it may use. The
 * pages import only their own files.
 */
function roomPatterns(room) {
  if (room === 'pages')
    return [
      {
        regex: '^(?!\\./)',
        message: 'http/pages/ imports only its own files (see test/architecture.test.ts).',
      },
    ]
  const allowed = [room, ...HTTP_ROOMS[room]].join('|')
  const others = HTTP_ROOMS[room].length > 0 ? HTTP_ROOMS[room].join(', ') : 'no other room'
  return [
    ...layerPatterns('http', 2),
    {
      regex: `^\\.\\./(?!\\.\\./)(?!(${allowed})(/|$))`,
      message: `http/${room}/ may import from ${others} in http/ (see test/architecture.test.ts).`,
    },
  ]
}

/** One config block per room of src/http/; it replaces the http layer's block for those files. */
const roomRules = Object.keys(HTTP_ROOMS).map((room) => ({
  files: [`src/http/${room}/*.ts`],
  rules: { 'no-restricted-imports': ['error', { patterns: roomPatterns(room) }] },
}))

export default defineConfig(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'lib/',
      '.wrangler/',
      'coverage/',
      'bench/.out/',
      '.fuzz-out/',
      'docs/',
      'worker-configuration.d.ts',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.js'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js', '.mjs', '.cjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      // Imports are extensionless relative TypeScript paths (bundler resolution), or end in .ts.
      'import-x/resolver-next': [
        createNodeResolver({ extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] }),
      ],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // Every import must resolve, or no-cycle would not see it; the runtime's modules are virtual.
      'import-x/no-unresolved': ['error', { ignore: ['^cloudflare:'] }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  ...layerRules,
  ...roomRules,
  {
    // edge-rate-limiter/client runs in browsers and Node too: it imports nothing but itself.
    files: ['src/client/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\./)',
              message:
                'client/ is dependency-free: only its own files (see test/architecture.test.ts).',
            },
          ],
        },
      ],
    },
  },
  {
    // The operator page shows rule ids and keys that clients choose: text only, never HTML.
    files: ['ui/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'write', 'writeln'].map((property) => ({
          property,
          message: 'Put strings in as text (ui/operator/dom.ts), never as HTML.',
        })),
      ],
      'no-restricted-globals': ['error', { name: 'DOMParser', message: 'No HTML parsing.' }],
    },
  },
  {
    files: PURE.map((layer) => `src/${layer}/**/*.ts`),
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Pure layers take the time as nowMs.' },
        { object: 'performance', property: 'now', message: 'Pure layers take the time as nowMs.' },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'fetch', message: 'Pure layers do no I/O.' },
        { name: 'caches', message: 'Pure layers do no I/O.' },
      ],
    },
  }
)
