/**
 * @module live
 * The live view's counting, pure: an isolate's tally, the stats object's store, the sketch.
 */
export { SpaceSaving } from './sketch'
export { LiveTally, minuteOf } from './tally'
export { LiveStore } from './store'
export type * from './types'
