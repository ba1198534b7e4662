/**
 * @module test/support/traffic
 * Traffic files for the rehearsal's tests: text (gzipped, if asked) as a file it can open.
 */
import type { TrafficFile } from '../../tools/rehearse/formats'

/**
 * A traffic file holding `text`.
 *
 * @param name - its name, as messages give it
 * @param text - its contents
 * @param gzip - whether to store them gzipped
 */
export function textFile(name: string, text: string, gzip = false): TrafficFile {
  return {
    name,
    open: () => {
      const plain = new Blob([text]).stream()
      return gzip ? plain.pipeThrough(new CompressionStream('gzip')) : plain
    },
  }
}

/** Lines as one text, each followed by a line feed. */
export const lines = (...items: string[]): string => items.map((item) => `${item}\n`).join('')
