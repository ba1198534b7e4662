// @ts-check
/**
 * ESLint for src, test, tools and bench: no unused code, no import cycle, and the layer rules
 * that test/architecture.test.ts checks (imports go http -> rules/limiter -> algorithms,
 * algorithms/, rules/ and live/ stay pure, and client/ imports nothing but itself).
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
