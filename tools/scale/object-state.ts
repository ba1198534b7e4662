/**
 * @module tools/scale/object-state
 * The `ctx` a simulated Durable Object gets: its id, synchronous in-memory storage (`kv` as on
 * SQLite-backed objects, plus the async `get`/`put`/`delete`), `deleteAll`, one alarm on virtual
 * timers, `blockConcurrencyWhile` and `waitUntil`. Storage outlives the instance: a restarted
 * object gets a new `ctx` over the same {@link SimStorage}.
 */

/** What storage tells its object's server about the alarm. */
export interface AlarmHost {
  /** Arms the alarm at `atMs`, or disarms it (`null`). */
  armAlarm(atMs: number | null): void
}

/** An object's storage: a sorted-on-list map and one alarm. */
export class SimStorage {
  readonly #data = new Map<string, unknown>()
  readonly #host: AlarmHost
  #alarmAtMs: number | null = null

  /** The synchronous KV API of SQLite-backed objects. */
  readonly kv = {
    get: <T = unknown>(key: string): T | undefined => this.#data.get(key) as T | undefined,
    put: <T = unknown>(key: string, value: T): void => void this.#data.set(key, value),
    delete: (key: string): boolean => this.#data.delete(key),
    list: <T = unknown>(options: { prefix?: string; limit?: number } = {}): [string, T][] =>
      [...this.#data.keys()]
        .filter((key) => options.prefix === undefined || key.startsWith(options.prefix))
        .sort()
        .slice(0, options.limit)
        .map((key) => [key, this.#data.get(key) as T]),
  }

  /** @param host - the server that runs the alarm */
  constructor(host: AlarmHost) {
    this.#host = host
  }

  /** Async KV: a value. */
  async get<T = unknown>(key: string): Promise<T | undefined> {
    return this.kv.get<T>(key)
  }

  /** Async KV: writes a value. */
  async put<T = unknown>(key: string, value: T): Promise<void> {
    this.kv.put(key, value)
  }

  /** Async KV: deletes a key. */
  async delete(key: string): Promise<boolean> {
    return this.kv.delete(key)
  }

  /** Deletes everything, the alarm too (compatibility date 2026-02-24 and later). */
  async deleteAll(): Promise<void> {
    this.#data.clear()
    await this.deleteAlarm()
  }

  /** Arms the one alarm. */
  async setAlarm(scheduledTime: number | Date): Promise<void> {
    this.#alarmAtMs = typeof scheduledTime === 'number' ? scheduledTime : scheduledTime.getTime()
    this.#host.armAlarm(this.#alarmAtMs)
  }

  /** The alarm armed, or `null`. */
  async getAlarm(): Promise<number | null> {
    return this.#alarmAtMs
  }

  /** Disarms the alarm. */
  async deleteAlarm(): Promise<void> {
    this.#alarmAtMs = null
    this.#host.armAlarm(null)
  }

  /** Forgets the alarm once it has fired (the server calls this before running it). */
  alarmFired(): void {
    this.#alarmAtMs = null
  }

  /** Keys stored (for tests). */
  get size(): number {
    return this.#data.size
  }
}

/** The `ctx` of one instance. */
export interface SimState {
  id: { name: string; toString(): string; equals(other: { toString(): string }): boolean }
  storage: SimStorage
  blockConcurrencyWhile<T>(callback: () => T | Promise<T>): Promise<T>
  waitUntil(promise: Promise<unknown>): void
}

/**
 * A `ctx` for an instance named `name` over `storage`.
 *
 * @param name - the object's name
 * @param storage - its storage
 * @param block - holds the object's next events until the promise settles
 */
export function simState(
  name: string,
  storage: SimStorage,
  block: (until: Promise<unknown>) => void
): SimState {
  return {
    id: { name, toString: () => name, equals: (other) => other.toString() === name },
    storage,
    blockConcurrencyWhile<T>(callback: () => T | Promise<T>): Promise<T> {
      let done: Promise<T>
      try {
        done = Promise.resolve(callback())
      } catch (error) {
        done = Promise.reject(error as Error)
      }
      block(done)
      return done
    },
    waitUntil(promise) {
      void promise.catch(() => undefined)
    },
  }
}
