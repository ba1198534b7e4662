/**
 * @module tools/scale/workers-shim
 * `cloudflare:workers` as the simulator provides it under Node (`cli.ts` maps the specifier
 * here): the Durable Object base class and `waitUntil`, nothing more. Only the platform is
 * shimmed; the limiter's modules run as they are.
 */
export { SimDurableObject as DurableObject } from './object-base'

/**
 * Keeps a promise running past its request: in the simulator every promise runs to its end.
 *
 * @param promise - the background work
 */
export function waitUntil(promise: Promise<unknown>): void {
  void promise.catch(() => undefined)
}
