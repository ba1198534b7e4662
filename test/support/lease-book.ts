/**
 * @module test/support/lease-book
 * A lease book as the leased-mode tests drive it, outside a request.
 */
import { ClientStats } from '../../src/limiter/calls/stats'
import { LeaseBook, type LeaseBookOptions } from '../../src/limiter/leased/leases'

/**
 * A lease book that counts into stats of its own and keeps no background call alive (there is
 * no request whose `waitUntil` could), with `options` on top: its clock, id and the rest.
 *
 * @param options - what the test sets
 */
export function leaseBook(options: LeaseBookOptions = {}): LeaseBook {
  return new LeaseBook({ stats: new ClientStats(0), keepAlive: () => undefined, ...options })
}
