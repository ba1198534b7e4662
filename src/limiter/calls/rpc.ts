/**
 * @module limiter/rpc
 * Timeouts, waits, the one retry, and errors of calls to limiter objects.
 */
import { LimiterUnavailableError, type UnavailableReason } from '../../errors'

/**
 * Runs `attempt` again once, on a fresh stub, when the runtime says that is safe. The second
 * run is told it is one (`again`): the first may have reached the object before it failed.
 */
export async function withRetry<T>(attempt: (again: boolean) => Promise<T>): Promise<T> {
  try {
    return await attempt(false)
  } catch (error) {
    if (!isRetryable(error)) throw error
    // A broken stub stays broken: `attempt` takes a new one.
    return await attempt(true)
  }
}

/** Rejects with a `timeout` {@link LimiterUnavailableError} unless `promise` settles in time. */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  // One promise and one timer: a race and a `finally` would add three promises to every call.
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new LimiterUnavailableError('timeout')), timeoutMs)
    promise.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error)
      }
    )
  })
}

/** Any failure as a {@link LimiterUnavailableError}. */
export function unavailableOf(error: unknown): LimiterUnavailableError {
  return error instanceof LimiterUnavailableError
    ? error
    : new LimiterUnavailableError(reasonOf(error), { cause: error })
}

/** Throws any failure as a {@link LimiterUnavailableError}. */
export function toUnavailable(error: unknown): never {
  throw unavailableOf(error)
}

function isRetryable(error: unknown): boolean {
  const flags = error as { retryable?: boolean; overloaded?: boolean } | null
  return flags?.retryable === true && flags.overloaded !== true
}

function reasonOf(error: unknown): UnavailableReason {
  return (error as { overloaded?: boolean } | null)?.overloaded === true ? 'overloaded' : 'error'
}

/**
 * A promise that settles after `ms` (a timer: in a Worker it runs while the request or the
 * object's call that made it does).
 *
 * @param ms - how long
 */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
