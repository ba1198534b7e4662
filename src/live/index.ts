/**
 * @module live
 * The live view's counting, pure: an isolate's tally, the stats object's store, the sketch.
 */
export { SpaceSaving, type Counted } from './sketch'
export { LiveTally, minuteOf, SKETCH_SLOTS, type TalliedKey, type TalliedMinute } from './tally'
export { LiveStore, WINDOW_MINUTES, type StoreChanges } from './store'
export type * from './types'
