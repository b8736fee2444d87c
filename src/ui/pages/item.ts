/**
 * One item: its text and link, its hot counters (PV, UV, score, suspicious views — service key), who
 * follows its author, the actions: record a view (it counts toward hot and joins the reader's
 * recent views), not interested, follow/unfollow, mute or block the author; and the "Why not?" box
 * (./why.ts) filled with the item.
 */
import type { ItemData } from '../../client/index.js';
import type { Ctx, Page } from '../context.js';
import { followButton } from '../cards.js';
import { h, isoMinute, plural, replace, statusLine } from '../dom.js';
import { describe } from '../extras.js';
import { whyNotBox } from './why.js';

/** The counters block (service key only; a reader token is told so). */
async function counters(ctx: Ctx, id: string, el: HTMLElement): Promise<void> {
  if (ctx.session.mode !== 'service') {
    replace(el, h('p', { class: 'meta' }, 'Counters need the service key.'));
    return;
  }
  try {
    const c = await ctx.client.hot.item(id);
    replace(
      el,
      h(
        'dl',
        { class: 'counters' },
        [
          ['PV', c.pv],
          ['UV', c.uv],
          ['Score', c.score === null ? 'not ranked' : c.score.toFixed(3)],
          [
            'Suspicious',
            `${plural(c.suspicious.repeat, 'repeat')} · ${c.suspicious.budget} over budget · ${c.suspicious.flagged} flagged`,
          ],
        ].map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v))),
      ),
    );
  } catch (err) {
    replace(el, h('p', { class: 'meta' }, `Counters: ${describe(err)}`));
  }
}

/** The author's followers (first 50). */
async function followers(ctx: Ctx, author: string, el: HTMLElement): Promise<void> {
  try {
    const p = await ctx.client.follows.followers(author, { limit: 50 });
    replace(
      el,
      h('h3', {}, `Who follows ${author}`),
      p.users.length
        ? h(
            'ul',
            { class: 'chips' },
            p.users.map((u) => h('li', {}, u.id)),
          )
        : h('p', { class: 'meta' }, 'Nobody yet.'),
      p.next_cursor ? h('p', { class: 'meta' }, 'Showing the 50 newest.') : null,
    );
  } catch (err) {
    replace(el, h('h3', {}, `Who follows ${author}`), h('p', { class: 'meta' }, describe(err)));
  }
}

/**
 * A button (`data-action`) that runs `run` on a click and says what it returns, or `failure` and why
 * it failed.
 */
function actionButton(
  ctx: Ctx,
  action: string,
  label: string,
  failure: string,
  run: () => Promise<string>,
): HTMLButtonElement {
  const b = h('button', { type: 'button', 'data-action': action }, label);
  b.addEventListener('click', async () => {
    try {
      ctx.say(await run());
    } catch (err) {
      ctx.say(`${failure}: ${describe(err)}`);
    }
  });
  return b;
}

/** The item's id, author, time and link, its text and its tags. */
function itemDetails(item: ItemData): (HTMLElement | null)[] {
  return [
    h(
      'p',
      { class: 'meta' },
      `${item.id} · by ${item.author_id} · ${isoMinute(item.published_at)}`,
      item.url ? [' · ', h('a', { href: item.url, rel: 'noopener noreferrer', target: '_blank' }, item.url)] : null,
    ),
    item.text ? h('p', { class: 'text' }, item.text) : null,
    item.tags.length
      ? h(
          'ul',
          { class: 'chips', 'aria-label': 'Tags' },
          item.tags.map((t) => h('li', {}, t)),
        )
      : null,
  ];
}

export const itemPage: Page = (root, ctx, arg) => {
  const id = decodeURIComponent(arg);
  const status = statusLine();
  replace(root, h('h2', {}, 'Item'), status);
  void (async () => {
    let item: ItemData;
    try {
      item = await ctx.client.items.get(id);
    } catch (err) {
      status.textContent = `Could not load item ${id}: ${describe(err)}`;
      return;
    }
    const counterEl = h('div', { 'aria-live': 'polite' });
    const followersEl = h('section', { class: 'followers' });
    const author = item.author_id;
    const view = actionButton(ctx, 'view', 'Record a view', 'The view failed', async () => {
      const v = await ctx.client.views.record(
        ctx.session.mode === 'service' ? { item_id: id, visitor_id: ctx.reader } : { item_id: id },
      );
      void counters(ctx, id, counterEl);
      return `View ${v.verdict}: PV ${v.pv}, UV ${v.uv}.${v.counted ? " It is now among the reader's recent views." : ''}`;
    });
    const dismiss = actionButton(ctx, 'not-interested', 'Not interested', 'Could not mark it', async () => {
      const f = await ctx.client.feedback.notInterested(id);
      return `Marked not interested; ${f.author_id} weighs less until ${isoMinute(f.author_penalty_until)}.`;
    });
    const mute = actionButton(ctx, 'mute', `Mute ${author}`, 'Could not mute', async () => {
      await ctx.client.users.muteAuthor(ctx.reader, author);
      return `Muted ${author}: their items leave every feed (not a block). Unmute under Preferences.`;
    });
    const block = actionButton(ctx, 'block', `Block ${author}`, 'Could not block', async () => {
      await ctx.client.blocks.block(ctx.reader, author);
      return `Blocked ${author}: none of their items reach this reader. Undo under Exclusions.`;
    });
    replace(
      root,
      h('h2', {}, item.title),
      status,
      ...itemDetails(item),
      h('div', { class: 'actions' }, view, dismiss, followButton(ctx, item.author_id), mute, block),
      h('h3', {}, 'Counters'),
      counterEl,
      followersEl,
      whyNotBox(ctx, item.id, 'item-why'),
    );
    void counters(ctx, id, counterEl);
    void followers(ctx, item.author_id, followersEl);
  })();
};
