/**
 * @module ui/dom
 * Element building for the operator page. Every string goes in as text (a text node or
 * `textContent`): rule ids, keys and messages come from clients and rules documents, so nothing
 * here ever parses HTML.
 */

/** What an element may hold: nodes, or strings and numbers that become text nodes. */
type Child = Node | string | number | null | undefined | false

/**
 * A new element.
 *
 * @param tag - the element's tag name
 * @param attrs - attributes (constant names chosen by the page; values set as attribute text)
 * @param children - its content; strings become text nodes
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, value)
  append(element, ...children)
  return element
}

/** Appends children, strings as text. */
export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)))
  }
}

/** Replaces an element's content. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren()
  append(parent, ...children)
}

/** The element with this id (the page's HTML defines them all). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id)
  if (!element) throw new Error(`#${id} is missing from the page`)
  return element as T
}

/** A button that runs `action` when clicked. */
export function button(label: string, action: () => void, attrs: Record<string, string> = {}) {
  const element = h('button', { type: 'button', ...attrs }, label)
  element.addEventListener('click', action)
  return element
}
