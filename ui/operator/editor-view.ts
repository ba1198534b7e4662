/**
 * @module ui/editor-view
 * The rules editor: the document in force as JSON; saving validates it (`PUT <prefix>/rules`
 * stores nothing invalid) and lists every error at its path.
 */
import { api, ApiError } from './api'
import { byId, fill, h } from './dom'
import { problemItem } from './rules-view'

/** Puts a document in the editor. */
export function loadDocument(document: unknown): void {
  byId<HTMLTextAreaElement>('rules-doc').value = JSON.stringify(document, null, 2)
}

/**
 * Validates and saves the editor's document.
 *
 * @returns whether it was saved (the rules in force changed)
 */
export async function saveDocument(): Promise<boolean> {
  const result = byId('rules-result')
  const text = byId<HTMLTextAreaElement>('rules-doc').value
  try {
    JSON.parse(text)
  } catch (error) {
    // Caught on purpose: a document that is not JSON is shown as the error it is.
    fill(
      result,
      h('p', { class: 'error' }, 'Not saved: the document is not JSON.'),
      h('ul', { class: 'errors' }, problemItem(`(document): ${(error as Error).message}`))
    )
    return false
  }
  try {
    const saved = await api<{ revision: number; rules: number; propagation: string }>('rules', {
      method: 'PUT',
      body: text,
    })
    fill(
      result,
      h(
        'p',
        { class: 'ok' },
        `Saved: revision ${saved.revision}, ${saved.rules} rule(s); ${saved.propagation}.`
      )
    )
    return true
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    const errors = error.errors
    fill(
      result,
      h(
        'p',
        { class: 'error', id: 'rules-errors-title' },
        errors.length
          ? `Not saved: ${errors.length} error(s); nothing changed.`
          : `Not saved: ${error.message}`
      ),
      errors.length > 0 &&
        h('ul', { class: 'errors', id: 'rules-errors' }, ...errors.map(problemItem))
    )
    return false
  }
}
