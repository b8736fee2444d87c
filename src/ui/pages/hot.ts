/**
 * The hot ranking: rank, title, PV, UV and score of the items published within the chosen range, the
 * formula's parameters (the exponent γ as a superscript) and when the ranking was computed, a "Why?" panel
 * per row (the item's explain in hot); refreshes on its own every `refresh_s`
 * (switchable) and on demand.
 */
import type { HotPage } from '../../client/index.js';
import type { Ctx, Page } from '../context.js';
import { h, isoMinute, plural, replace, statusLine } from '../dom.js';
import { whyButton } from '../explain-view.js';
import { describe } from '../extras.js';

const RANGES = ['1h', '24h', '72h', '7d', '30d'];

/** " · n suspicious views" when an item had any (left out of its PV/UV/score), else "". */
function suspicious(s: { repeat: number; budget: number; flagged: number }): string {
  const n = s.repeat + s.budget + s.flagged;
  return n > 0 ? ` · ${plural(n, 'suspicious view')} left out` : '';
}

export const hotPage: Page = (root, ctx) => {
  const status = statusLine();
  const range = h(
    'select',
    { id: 'hot-range' },
    RANGES.map((r) => h('option', { value: r, selected: r === '72h' }, r)),
  );
  const auto = h('input', { type: 'checkbox', id: 'hot-auto', checked: true });
  const refreshBtn = h('button', { type: 'button', 'data-action': 'refresh' }, 'Refresh');
  const params = h('p', { class: 'params' });
  const body = h('tbody');
  let timer: ReturnType<typeof setTimeout> | undefined;
  const load = async () => {
    clearTimeout(timer);
    let next = 30;
    try {
      const p = await ctx.client.hot.top({ range: range.value, limit: 50 });
      replace(params, ...formula(p));
      replace(
        body,
        p.items.map((it, i) => hotRow(ctx, it, i, () => range.value)),
      );
      status.textContent = p.items.length
        ? ''
        : 'No item has a counted view in this range yet: open an item and record a view.';
      next = Math.max(5, p.refresh_s);
    } catch (err) {
      status.textContent = `The ranking failed: ${describe(err)}`;
    }
    if (auto.checked) timer = setTimeout(() => void load(), next * 1000);
  };
  range.addEventListener('change', () => void load());
  auto.addEventListener('change', () => void load());
  refreshBtn.addEventListener('click', () => void load());
  replace(
    root,
    h(
      'div',
      { class: 'toolbar' },
      h('h2', {}, 'Hot'),
      h('label', { for: 'hot-range' }, 'Published within '),
      range,
      refreshBtn,
      h('label', {}, auto, ' refresh on its own'),
    ),
    params,
    status,
    h('div', { class: 'table-wrap' }, hotTable(body)),
  );
  void load();
  return () => clearTimeout(timer);
};

/** The ranking's table around its rows. */
function hotTable(body: HTMLElement): HTMLElement {
  return h(
    'table',
    { class: 'hot' },
    h('caption', { class: 'sr-only' }, 'Hot items'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['#', 'Item', 'PV', 'UV', 'Score'].map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    body,
  );
}

/** The formula with the ranking's parameters, when it was computed, and the suspicious views left out. */
function formula(p: HotPage): (string | HTMLElement)[] {
  const { alpha, beta, base, gamma } = p.params;
  return [
    'score = (α·PV + β·UV) / (hours since publish + base)',
    h('sup', {}, 'γ'),
    ` with α = ${alpha}, β = ${beta}, base = ${base}, γ = ${gamma}. `,
    `Computed ${isoMinute(p.computed_at)}; recomputed at most every ${p.refresh_s} s. `,
    `Suspicious views left out: ${plural(p.suspicious.repeat, 'repeat')}, ${p.suspicious.budget} over budget, ${p.suspicious.flagged} flagged.`,
  ];
}

/** One row: rank, the item (with its "Why?" panel in hot, over the chosen range), PV, UV, score. */
function hotRow(ctx: Ctx, it: HotPage['items'][number], i: number, range: () => string): HTMLElement {
  const panel = h('div', { class: 'why', 'aria-live': 'polite' });
  return h(
    'tr',
    { 'data-id': it.id },
    h('td', {}, i + 1),
    h(
      'td',
      {},
      h('a', { href: `#/item/${encodeURIComponent(it.id)}` }, it.title),
      h('span', { class: 'meta' }, ` ${it.author_id}${suspicious(it.suspicious)} `),
      whyButton(ctx, 'hot', it.id, panel, range),
      panel,
    ),
    h('td', { class: 'num' }, it.pv),
    h('td', { class: 'num' }, it.uv),
    h('td', { class: 'num' }, it.score.toFixed(3)),
  );
}
