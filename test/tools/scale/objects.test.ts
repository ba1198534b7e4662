import { DurableObject } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { RateLimiterObject } from '../../../src/limiter/rate-limiter-object'
import { SimNamespace, type Geography } from '../../../tools/scale/namespace'
import type { ServerObserver } from '../../../tools/scale/object-server'
import { VirtualClock } from '../../../tools/scale/virtual-time'
import { settle, whileInstalled } from '../../support/virtual-clock'

const T0 = 1_800_000_000_000

/** Three places on a line, 10 ms apart; hints land on the last. */
const line: Geography = {
  oneWayMs: (from, to) => 1 + 10 * Math.abs(from - to),
  hintLocation: () => 2,
}

/** Counts what the servers report. */
function observer() {
  const seen = { arrived: 0, overloaded: 0, waits: [] as number[] }
  const o: ServerObserver = {
    arrived: () => void seen.arrived++,
    overloaded: () => void seen.overloaded++,
    started: (_, waitMs) => void seen.waits.push(waitMs),
  }
  return { seen, o }
}

/** How long a new Echo's constructor blocks its calls (virtual ms). */
const CONSTRUCTION_MS = 50

interface EchoEnv {
  LIMITER: { getByName(name: string): EchoCalls }
}

/** What the Echo objects answer. */
interface EchoCalls {
  now(): number
  bump(): number
  relay(name: string): Promise<number>
}

/** A class whose objects wait on `clock` as they are built, write, and call each other. */
function echoOn(clock: VirtualClock) {
  return class Echo extends DurableObject<EchoEnv> implements EchoCalls {
    constructor(ctx: DurableObjectState, env: EchoEnv) {
      super(ctx, env)
      void ctx.blockConcurrencyWhile(
        () => new Promise<void>((resolve) => void clock.after(CONSTRUCTION_MS, resolve))
      )
    }
    now(): number {
      return Date.now()
    }
    bump(): number {
      const n = (this.ctx.storage.kv.get<number>('n') ?? 0) + 1
      this.ctx.storage.kv.put('n', n)
      return n
    }
    async relay(name: string): Promise<number> {
      return await this.env.LIMITER.getByName(name).now()
    }
  }
}

type Echo = InstanceType<ReturnType<typeof echoOn>>

function world<T extends object>(
  classOn: (clock: VirtualClock) => new (ctx: never, env: never) => T,
  queueBound = 100
) {
  const clock = new VirtualClock(T0)
  const { seen, o } = observer()
  const namespace = new SimNamespace(clock, line, classOn(clock), { serviceMs: 1, queueBound }, o)
  return { clock, seen, namespace }
}

describe('simulated objects', () => {
  it('run the real RateLimiterObject, created where the first caller is, one delay each way', async () => {
    const { clock, namespace } = world(() => RateLimiterObject)
    await whileInstalled(clock, async () => {
      const stub = namespace
        .view(0)
        .getByName('k') as unknown as DurableObjectStub<RateLimiterObject>
      const policy = { algorithm: 'fixed-window' as const, limit: 2, periodMs: 60_000 }
      const answers: { allowed: boolean; atMs: number }[] = []
      for (let i = 0; i < 3; i++)
        void stub
          .charge(policy, 1)
          .then((d) => answers.push({ allowed: d.allowed, atMs: Date.now() }))
      await settle(clock)
      // Out 1 ms, served one after another (1 ms each), back 1 ms.
      expect(answers).toEqual([
        { allowed: true, atMs: T0 + 3 },
        { allowed: true, atMs: T0 + 4 },
        { allowed: false, atMs: T0 + 5 },
      ])
      expect(namespace.object('k')!.location).toBe(0)
      // From two places further, the same object is 21 ms away.
      const far = namespace
        .view(2)
        .getByName('k') as unknown as DurableObjectStub<RateLimiterObject>
      const sentMs = Date.now()
      let tookMs = 0
      void far.charge(policy, 0).then(() => (tookMs = Date.now() - sentMs))
      await settle(clock)
      expect(tookMs).toBe(21 + 1 + 21)
    })
  })

  it('answer "overloaded" past the queue bound, with the flag the runtime sets', async () => {
    const { clock, namespace, seen } = world(() => RateLimiterObject, 3)
    await whileInstalled(clock, async () => {
      const stub = namespace
        .view(0)
        .getByName('k') as unknown as DurableObjectStub<RateLimiterObject>
      const policy = { algorithm: 'fixed-window' as const, limit: 100, periodMs: 60_000 }
      // Ten calls at once against a 1 ms service time: one runs, three wait, six are refused.
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, () => stub.charge(policy, 1)).map((p) => (settle(clock), p))
      )
      const refused = results.filter((r) => r.status === 'rejected')
      expect(refused).toHaveLength(6)
      const error = (refused[0] as PromiseRejectedResult).reason as Error & { overloaded?: boolean }
      expect(error.message).toBe('Durable Object is overloaded. Too many requests queued.')
      expect(error.overloaded).toBe(true)
      expect(seen).toMatchObject({ arrived: 10, overloaded: 6, waits: [0, 1, 2, 3] })
    })
  })

  it('fail queued and running calls on a restart, then serve from a new instance over the same storage', async () => {
    const { clock, namespace } = world(echoOn)
    await whileInstalled(clock, async () => {
      const stub = namespace.view(0).getByName('e') as unknown as DurableObjectStub<Echo>
      await Promise.all([stub.bump(), settle(clock)])
      const server = namespace.object('e')!
      const first = server.instance
      const calls = [stub.bump(), stub.bump(), stub.bump()].map((p) =>
        p.then(
          (n) => ({ n }),
          (error: Error & Record<string, unknown>) => error
        )
      )
      // They reach the object 1 ms on and run at +1, +2, +3: at +2 the first has answered.
      const restartedAtMs = Date.now() + 2
      clock.at(restartedAtMs, () => server.restart(200))
      await settle(clock)
      const [answered, ...failed] = await Promise.all(calls)
      expect(answered).toEqual({ n: 2 })
      expect(failed).toHaveLength(2)
      for (const failure of failed)
        expect(failure).toMatchObject({
          message: 'Durable Object reset because its code was updated.',
          durableObjectReset: true,
          retryable: true,
        })
      const next = stub.bump()
      await settle(clock)
      expect(await next).toBe(3)
      expect(server.instance).not.toBe(first)
      // Down for 200 ms, then the new instance's constructor blocks.
      expect(Date.now()).toBe(restartedAtMs + 200 + CONSTRUCTION_MS + 1 + 1)
    })
  })

  it('let an object call another from its own location; a hint places an object', async () => {
    const { clock, namespace } = world(echoOn)
    await whileInstalled(clock, async () => {
      const hinted = namespace.view(0).getByName('far', {
        locationHint: 'oc',
      }) as unknown as DurableObjectStub<Echo>
      const sentMs = Date.now()
      let answeredMs = 0
      void hinted.relay('near-far').then(() => (answeredMs = Date.now()))
      await settle(clock)
      expect(namespace.object('far')!.location).toBe(2)
      // The relayed-to object is created where its caller, the object at 2, is.
      expect(namespace.object('near-far')!.location).toBe(2)
      // 21 ms out, the construction block, then the inner call: 1 out, its block, 1, 1 back.
      expect(answeredMs - sentMs).toBeGreaterThan(
        21 + CONSTRUCTION_MS + 1 + CONSTRUCTION_MS + 1 + 21
      )
    })
  })
})
