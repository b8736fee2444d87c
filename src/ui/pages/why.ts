/**
 * The operator's "Why not?" box: a reader id (the service key acts for any reader; a reader token only for
 * its own, so the field is fixed to it), an item id and a feed → the item's explain for that reader and
 * feed (`GET /v1/feeds/{feed}/explain`), rendered by ../explain-view.ts. A refusal (unknown item 404, bad
 * input 400, another reader under a token 403) shows the server's sentence. On its own page (`#/why`,
 * `#/why/<item id>`) and on the Item page.
 */
import type { Ctx, Page } from '../context.js';
import { h, replace } from '../dom.js';
import { EXPLAIN_FEEDS, type ExplainFeed, explainItem, explainView } from '../explain-view.js';
import { describe } from '../extras.js';

/** Ids of the box's fields (`prefix` keeps two boxes on one page apart). */
function ids(prefix: string) {
  return { reader: `${prefix}-reader`, item: `${prefix}-item`, feed: `${prefix}-feed` };
}

/**
 * The "Why not?" form and its answer under `heading`; `itemId` fills the item field (the Item page's box),
 * `prefix` names the fields' ids.
 */
export function whyNotBox(ctx: Ctx, itemId = '', prefix = 'why', heading = 'Why not?'): HTMLElement {
  const id = ids(prefix);
  const service = ctx.session.mode === 'service';
  const reader = h('input', { id: id.reader, value: ctx.reader, required: true, readonly: !service, size: 14 });
  const item = h('input', { id: id.item, value: itemId, required: true, size: 18, autocomplete: 'off' });
  const feed = h(
    'select',
    { id: id.feed },
    EXPLAIN_FEEDS.map((f) => h('option', { value: f }, f)),
  );
  const out = h('div', { class: 'why-answer', 'aria-live': 'polite', 'data-testid': 'why-answer' });
  const form = h(
    'form',
    { class: 'why-not', 'aria-label': 'Why not?' },
    h('p', { class: 'field' }, h('label', { for: id.reader }, service ? 'Reader id' : 'Reader (the token’s)'), reader),
    h('p', { class: 'field' }, h('label', { for: id.item }, 'Item id'), item),
    h('p', { class: 'field' }, h('label', { for: id.feed }, 'Feed'), feed),
    h('button', { type: 'submit' }, 'Explain'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const who = reader.value.trim();
    replace(out, h('p', { class: 'meta' }, 'Asking…'));
    try {
      const x = await explainItem(ctx.client, feed.value as ExplainFeed, item.value.trim(), service ? who : undefined);
      replace(out, explainView(x, x.reader_id === ctx.reader && !service));
    } catch (err) {
      replace(out, h('p', { class: 'bad', role: 'alert', 'data-testid': 'explain-error' }, describe(err)));
    }
  });
  return h('section', { class: 'why-box' }, h('h3', {}, heading), form, out);
}

/** `#/why` (or `#/why/<item id>`): the box on its own, with a sentence on what it answers. */
export const whyPage: Page = (root, ctx, arg) => {
  replace(
    root,
    h('h2', {}, 'Why not?'),
    h(
      'p',
      {},
      'Why an item does or does not reach a reader in a feed: every rule that removes it (seen, muted words, blocks, …), ',
      'its score and the parts the score is made of, and its rank. The service key can ask for any reader; a reader token for itself only.',
    ),
    whyNotBox(ctx, decodeURIComponent(arg), 'why', 'Explain an item'),
  );
};
