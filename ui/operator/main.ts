/**
 * @module ui/main
 * The operator page (`GET <ADMIN_PREFIX>/`): logs in with the admin token, then shows the
 * rules in force, the live view, "try a request" and the rules editor (with its rehearsal of
 * the editor's rules on recorded traffic), all from the admin API.
 */
import { api, ApiError, setToken, token } from './api'
import { byId } from './dom'
import { loadDocument, saveDocument } from './editor-view'
import { runExplain } from './explain-view'
import { keyLabel, keyPath } from './keys'
import { showLive, type Live } from './live-view'
import { initRehearse } from './rehearse-view'
import { showRules, type RulesState } from './rules-view'

/** How often the live view is read again (ms). */
const REFRESH_MS = 5000
let timer: ReturnType<typeof setInterval> | undefined

function status(message: string, isError = false): void {
  const element = byId('status')
  element.textContent = message
  element.className = isError ? 'error' : ''
}

/** Runs an action; a 401 sends the page back to the token form, other errors go to the status. */
async function guarded(action: () => Promise<void>): Promise<void> {
  try {
    await action()
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return logout('The token was refused.')
    status(error instanceof Error ? error.message : String(error), true)
  }
}

/** The document in force, as last read: what a rehearsal compares the editor's with. */
let inForce: unknown

async function loadRules(): Promise<void> {
  const rules = await api<RulesState>('rules')
  inForce = rules.document
  showRules(rules)
  return loadDocumentOnce(rules.document)
}

let documentLoaded = false
function loadDocumentOnce(document: unknown): void {
  if (documentLoaded) return
  loadDocument(document)
  documentLoaded = true
}

async function loadStats(): Promise<void> {
  const stats = await api<{ live?: Live }>('stats')
  showLive(stats.live, reset)
  byId('updated').textContent = `live view read at ${new Date().toLocaleTimeString()}`
}

function reset(rule: string, key: string): void {
  void guarded(async () => {
    await api(keyPath(rule, key), { method: 'DELETE' })
    status(`Reset ${rule}: ${keyLabel(rule, key)}`)
    await loadStats()
    if (byId('explain-result').childElementCount > 0) await runExplain(reset)
  })
}

function open(): void {
  byId('login').hidden = true
  byId('app').hidden = false
  byId('logout').hidden = false
  void guarded(async () => {
    await loadRules()
    await loadStats()
  })
  timer = setInterval(() => void guarded(loadStats), REFRESH_MS)
}

function logout(message = ''): void {
  setToken(null)
  if (timer !== undefined) clearInterval(timer)
  byId('app').hidden = true
  byId('logout').hidden = true
  byId('login').hidden = false
  byId('login-error').textContent = message
  status('')
  byId('updated').textContent = ''
}

function init(): void {
  byId<HTMLInputElement>('explain-url').value = new URL('/api/hello', location.origin).href
  byId('login').addEventListener('submit', (event) => {
    event.preventDefault()
    const input = byId<HTMLInputElement>('token')
    setToken(input.value)
    input.value = ''
    void api('rules').then(open, (error: unknown) =>
      logout(
        error instanceof ApiError && error.status === 401 ? 'The token was refused.' : String(error)
      )
    )
  })
  byId('logout').addEventListener('click', () => logout())
  byId('refresh').addEventListener('click', () => void guarded(loadStats))
  byId('explain').addEventListener('submit', (event) => {
    event.preventDefault()
    void guarded(() => runExplain(reset))
  })
  byId('rules-save').addEventListener('click', () => {
    void guarded(async () => {
      if (await saveDocument()) await loadRules()
    })
  })
  initRehearse(() => inForce)
  byId('rules-reload').addEventListener('click', () => {
    documentLoaded = false
    void guarded(loadRules)
  })
  if (token()) open()
  else logout()
}

init()
