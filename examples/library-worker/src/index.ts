import { Hono } from 'hono'
import { kvRules, parseRules, rateLimit } from 'edge-rate-limiter'

// wrangler finds Durable Object classes among the main module's exports.
export { RateLimiterObject } from 'edge-rate-limiter'

// Validated once, at startup: a mistake throws a RuleConfigError naming the field.
const rules = parseRules(
  {
    version: 1,
    rules: [
      {
        id: 'api-per-ip',
        match: { path: '/api/*' },
        key: ['ip'],
        algorithm: 'sliding-window',
        limit: 2,
        period: '1m',
      },
    ],
  },
  'src/index.ts'
)

// `Env` comes from `wrangler types` (worker-configuration.d.ts): LIMITER and RULES.
const app = new Hono<{ Bindings: Env }>()

// These rules, unless the `rules` key of the RULES KV namespace holds a document.
app.use('/api/*', rateLimit({ rules: kvRules(rules) }))

app.get('/api/hello', (c) => {
  const [first] = c.get('rateLimit').decisions // what the limiter decided, for the handler
  return c.json({ hello: 'world', remaining: first?.decision.remaining })
})

export default app
