/**
 * @module ui/rehearse-worker
 * The rehearsal in the operator's browser (`<prefix>/ui/rehearse.js`, a dedicated worker, loaded
 * only when asked): the files dropped on the page are read as streams (gzipped or not) and
 * replayed through the rules in force and the editor's rules by the same code as
 * `rules rehearse` (tools/rehearse/). The traffic never leaves the browser.
 */
import { RuleConfigError } from '../../src/errors'
import { parseRules, parseRulesText } from '../../src/rules'
import { TraceError } from '../../tools/simulate/trace'
import { rehearse } from '../../tools/rehearse/rehearse'
import type { RehearseAnswer, RehearseAsk } from './rehearse-messages'

/** The worker's side of its messages (the DOM library types `self` as a window). */
const scope = self as unknown as {
  onmessage: ((event: { data: RehearseAsk }) => void) | null
  postMessage: (answer: RehearseAnswer) => void
}

async function run(ask: RehearseAsk): Promise<RehearseAnswer> {
  let current, proposed
  try {
    current = parseRules(ask.current, 'the rules in force')
    proposed = parseRulesText(ask.proposed, 'the editor')
  } catch (error) {
    if (!(error instanceof RuleConfigError)) throw error
    return { kind: 'error', message: error.message.split('\n')[0]!, problems: [...error.problems] }
  }
  try {
    const report = await rehearse({
      current: { name: 'rules in force', ruleSet: current },
      proposed: { name: 'the editor', ruleSet: proposed },
      traffic: ask.files.map((file) => ({ name: file.name, open: () => file.stream() })),
      reorderMs: 60_000,
      skipBad: ask.skipBad,
      methodOverride: 'count',
      onProgress: (requests, atMs) => scope.postMessage({ kind: 'progress', requests, atMs }),
    })
    return { kind: 'report', report }
  } catch (error) {
    if (!(error instanceof TraceError)) throw error
    return { kind: 'error', message: error.message, problems: [] }
  }
}

scope.onmessage = (event) => {
  run(event.data).then(scope.postMessage, (error: unknown) =>
    scope.postMessage({ kind: 'error', message: String(error), problems: [] })
  )
}
