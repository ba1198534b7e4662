/**
 * @module bench/peer/worker
 * The benchmark's peer: hono-rate-limiter with its Cloudflare Durable Object store, set up as
 * the README of @hono-rate-limiter/cloudflare shows (a limiter built per request around the
 * binding, keyed by `cf-connecting-ip`, draft-6 headers), in front of the same pass-through as
 * the other targets. The limit and window come from vars so that every scenario can set them.
 */
import { DurableObjectRateLimiter, DurableObjectStore } from '@hono-rate-limiter/cloudflare'
import { Hono, type Context, type Next } from 'hono'
import { rateLimiter } from 'hono-rate-limiter'

type Bindings = {
  CACHE: DurableObjectNamespace<DurableObjectRateLimiter>
  ORIGIN: string
  LIMIT: string
  WINDOW_MS: string
}

const app = new Hono<{ Bindings: Bindings }>()

app.use((c: Context<{ Bindings: Bindings }>, next: Next) =>
  rateLimiter<{ Bindings: Bindings }>({
    windowMs: Number(c.env.WINDOW_MS),
    limit: Number(c.env.LIMIT),
    standardHeaders: 'draft-6',
    keyGenerator: (c) => c.req.header('cf-connecting-ip') ?? '',
    store: new DurableObjectStore({ namespace: c.env.CACHE }),
  })(c, next)
)

app.all('*', (c) => {
  const url = new URL(c.req.url)
  return fetch(new Request(c.env.ORIGIN + url.pathname + url.search, c.req.raw), {
    redirect: 'manual',
  })
})

export { DurableObjectRateLimiter }

export default app
