/**
 * @module tools/fleet/compare
 * `--compare`: placeholder until the simulator runs here.
 */
import type { FleetOptions } from './options'
import type { Comparable } from './report'
import type { FleetSummary } from './summary'

/**
 * Runs the scale simulator in the fleet's world.
 *
 * @param options - the fleet's run
 * @param fleet - what the fleet measured
 */
export async function compareWithSimulator(
  options: FleetOptions,
  fleet: FleetSummary
): Promise<Comparable> {
  void options
  return fleet
}
