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

/** Past this age a time is shown as its date ("29 Feb 2016"), not as "N d ago": 30 days, ms. */
export const AGO_MAX_MS = 30 * 86_400_000;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "1 item", "3 items": `n` and the noun, singular at exactly 1 (`many` defaults to `one` + "s"). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The UTC date of epoch seconds as "29 Feb 2016". */
export function dayOf(epochS: number): string {
  const d = new Date(epochS * 1000);
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

/**
 * How long ago epoch-seconds `epochS` was, relative to `nowMs` (ms): "just now" (under a minute, or a
 * time ahead of the browser's clock — a server on virtual time), "12 min ago", "3 h ago", "2 d ago", and
 * past {@link AGO_MAX_MS} the date itself ("29 Feb 2016"), which reads better than "9 y ago".
 */
export function ago(epochS: number, nowMs = Date.now()): string {
  const ms = nowMs - epochS * 1000;
  if (ms > AGO_MAX_MS) return dayOf(epochS);
  const s = Math.floor(ms / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** A `<time>` of epoch seconds: {@link ago} as its text, the exact UTC time as `datetime` and tooltip. */
export function timeEl(epochS: number, nowMs = Date.now()): HTMLTimeElement {
  const iso = new Date(epochS * 1000).toISOString();
  return h('time', { datetime: iso, title: isoMinute(epochS) }, ago(epochS, nowMs));
}

/** An ISO date-time (UTC, minutes) of epoch seconds. */
export function isoMinute(epochS: number): string {
  return `${new Date(epochS * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A status line region that screen readers announce. */
export function statusLine(): HTMLParagraphElement {
  return h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
}
