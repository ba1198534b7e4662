/**
 * @module test/support/flaky-limiter-object
 * A Durable Object with the limiter's RPC shape that fails the way real objects can: the rule
 * id in its name picks throwing, or never answering (a timeout).
 */
import { DurableObject } from 'cloudflare:workers'
import type { Policy } from '../../src/algorithms'
import type { Decision } from '../../src/types'

export class FlakyLimiterObject extends DurableObject {
  async consume(_policy: Policy, _cost: number): Promise<Decision> {
    const name = this.ctx.id.name ?? ''
    if (name.startsWith('hangs')) await new Promise(() => {})
    throw new Error(`flaky limiter ${name} failed`)
  }
}
