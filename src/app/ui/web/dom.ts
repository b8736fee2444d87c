/**
 * A tiny DOM builder for the explorer: `h('button', {onclick}, 'Label')`. Text is always set as text
 * (never as HTML), so item titles from the API cannot inject markup.
 */

type Child = Node | string | number | null | undefined | false;
/** Children: a child or (nested) arrays of them. */
export type Kids = Child | readonly Kids[];
type Attrs = Record<string, unknown>;

/** Creates an element: attributes (`on*` are listeners, `class`, `data-*`, booleans), then children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Kids[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v as EventListener);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

/** Appends children (nested arrays flattened; null/false skipped). */
export function append(el: Element, children: Kids[]): void {
  for (const c of (children as unknown[]).flat(Infinity) as Child[]) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'number' ? String(c) : c);
  }
}

/** Replaces an element's children. */
export function replace(el: Element, ...children: Kids[]): void {
  el.replaceChildren();
  append(el, children);
}

/** "3 min ago" style age of an epoch-seconds time relative to `nowMs`. */
export function age(epochS: number, nowMs = Date.now()): string {
  const s = Math.max(0, Math.round(nowMs / 1000 - epochS));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** An ISO date-time (UTC, minutes) of epoch seconds. */
export function isoMinute(epochS: number): string {
  return `${new Date(epochS * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A status line region that screen readers announce. */
export function statusLine(): HTMLParagraphElement {
  return h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
}
