/**
 * @module tools/scale/object-base
 * The Durable Object base class as the simulator provides it: it keeps `ctx` and `env`, as
 * `cloudflare:workers`' `DurableObject` does, and checks nothing. Under Node the bundle
 * (`cli.ts`) makes it `cloudflare:workers`' `DurableObject`; in workerd (the tests) the real base
 * refuses a state it did not make, so {@link instantiate} swaps it in for one construction.
 */

/** The base class simulated objects run on. */
export class SimDurableObject {
  /**
   * @param ctx - the object's state (the simulator's `ctx`)
   * @param env - its bindings
   */
  constructor(ctx: unknown, env: unknown) {
    // Own properties: a base with accessors of these names (workerd's) must not shadow them.
    Object.defineProperty(this, 'ctx', { value: ctx, writable: true, configurable: true })
    Object.defineProperty(this, 'env', { value: env, writable: true, configurable: true })
  }
}

/** A Durable Object class, as the simulator calls its constructor. */
export type ObjectClass<T> = new (ctx: never, env: never) => T

/**
 * A new instance of `Class` over the simulator's `ctx` and `env`. If the class's platform base
 * (the first native class it extends) is not {@link SimDurableObject}, the class just below it
 * extends {@link SimDurableObject} for this one synchronous construction, and then extends the
 * platform base again: nothing else can run in between.
 *
 * @param Class - the Durable Object class
 * @param ctx - the state it gets
 * @param env - the bindings it gets
 */
export function instantiate<T>(Class: ObjectClass<T>, ctx: unknown, env: unknown): T {
  const construct = Class as unknown as new (ctx: unknown, env: unknown) => T
  let child: object = Class
  let parent: unknown = Object.getPrototypeOf(child)
  while (typeof parent === 'function' && parent !== SimDurableObject && !isNative(parent)) {
    child = parent
    parent = Object.getPrototypeOf(parent)
  }
  if (parent === SimDurableObject || typeof parent !== 'function' || parent === Function.prototype)
    return new construct(ctx, env)
  Object.setPrototypeOf(child, SimDurableObject)
  try {
    return new construct(ctx, env)
  } finally {
    Object.setPrototypeOf(child, parent)
  }
}

function isNative(fn: object): boolean {
  return Function.prototype.toString.call(fn).includes('[native code]')
}
