/**
 * @module bench/naive/worker
 * The benchmark's baseline: the simplest Durable-Object-per-key limiter one would write. A
 * sliding window (the current fixed window plus the previous one, weighted by overlap) in one
 * SQLite table per object, keyed by client address, then a pass-through to the origin. No
 * alarm: idle keys' rows stay until the key is seen again.
 */
import { DurableObject } from 'cloudflare:workers'

interface NaiveEnv {
  NAIVE: DurableObjectNamespace<NaiveLimiter>
  ORIGIN: string
  LIMIT: string
  PERIOD_MS: string
}

/** One limit key's windows. */
export class NaiveLimiter extends DurableObject<NaiveEnv> {
  constructor(ctx: DurableObjectState, env: NaiveEnv) {
    super(ctx, env)
    ctx.storage.sql.exec(
      'CREATE TABLE IF NOT EXISTS windows (start INTEGER PRIMARY KEY, hits INTEGER NOT NULL)'
    )
  }

  /** Counts one hit if it fits; the answer says whether it did and when to retry if not. */
  hit(limit: number, periodMs: number): { allowed: boolean; retryAfterS: number } {
    const now = Date.now()
    const start = now - (now % periodMs)
    const sql = this.ctx.storage.sql
    const count = (at: number) =>
      sql.exec<{ hits: number }>('SELECT hits FROM windows WHERE start = ?', at).toArray()[0]
        ?.hits ?? 0
    const current = count(start)
    const weight = 1 - (now - start) / periodMs
    if (count(start - periodMs) * weight + current + 1 > limit)
      return { allowed: false, retryAfterS: Math.ceil((start + periodMs - now) / 1000) }
    sql.exec(
      'INSERT INTO windows (start, hits) VALUES (?, 1) ON CONFLICT (start) DO UPDATE SET hits = hits + 1',
      start
    )
    if (current === 0) sql.exec('DELETE FROM windows WHERE start < ?', start - periodMs)
    return { allowed: true, retryAfterS: 0 }
  }
}

export default {
  async fetch(request: Request, env: NaiveEnv): Promise<Response> {
    const key = request.headers.get('cf-connecting-ip') ?? 'unknown'
    const { allowed, retryAfterS } = await env.NAIVE.getByName(key).hit(
      Number(env.LIMIT),
      Number(env.PERIOD_MS)
    )
    if (!allowed)
      return new Response('Too Many Requests', {
        status: 429,
        headers: { 'retry-after': String(retryAfterS) },
      })
    const url = new URL(request.url)
    return fetch(new Request(env.ORIGIN + url.pathname + url.search, request), {
      redirect: 'manual',
    })
  },
} satisfies ExportedHandler<NaiveEnv>
