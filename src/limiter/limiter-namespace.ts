/**
 * @module limiter/limiter-namespace
 * The Durable Object namespace the limiter counts in, typed with its class: what the Worker's
 * `LIMITER` binding is. Types only. Code the objects themselves run takes the class-free
 * `ObjectNamespace` (`object-name.ts`) instead, so the class need not import what imports it.
 */
import type { RateLimiterObject } from './rate-limiter-object'

/** The Durable Object namespace the limiter counts in. */
export type LimiterNamespace = DurableObjectNamespace<RateLimiterObject>
