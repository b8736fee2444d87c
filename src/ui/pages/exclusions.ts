/**
 * A reader's exclusions, each with its undo where the API has one: "not interested" items (Undo →
 * `DELETE /v1/feedback/:item_id`), blocked authors (Unblock), plus the recent views and engaged items
 * (shown; they leave on their own — views after `FRESHET_RECENT_VIEWS` newer ones or the TTL).
 */
import type { ExclusionListData as ExclusionList } from '../../client/index.js';
import type { Ctx, Page } from '../context.js';
import { h, isoMinute, replace, statusLine } from '../dom.js';
import { describe, exclusions } from '../extras.js';

/** Titles of up to 50 items (one GET each, in parallel); a deleted or unknown item keeps its id. */
async function titles(ctx: Ctx, ids: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)].slice(0, 50);
  const got = await Promise.all(
    unique.map((id) =>
      ctx.client.items.get(id).then(
        (it) => [id, it.title] as const,
        () => null,
      ),
    ),
  );
  return new Map(got.filter((x): x is readonly [string, string] => x !== null));
}

let names = new Map<string, string>();
const link = (id: string) => h('a', { href: `#/item/${encodeURIComponent(id)}` }, names.get(id) ?? id);

/** A section with a list, or a sentence when it is empty. */
function section(title: string, hint: string, rows: HTMLElement[]): HTMLElement {
  return h(
    'section',
    { class: 'excl' },
    h('h3', {}, `${title} (${rows.length})`),
    h('p', { class: 'meta' }, hint),
    rows.length ? h('ul', { class: 'rows' }, rows) : h('p', {}, 'None.'),
  );
}

/** An undo button that runs `act`, then reloads the page. */
function undo(
  ctx: Ctx,
  label: string,
  act: () => Promise<unknown>,
  done: string,
  reload: () => void,
): HTMLButtonElement {
  const b = h('button', { type: 'button', class: 'small', 'data-action': 'undo' }, label);
  b.addEventListener('click', async () => {
    b.disabled = true;
    try {
      await act();
      ctx.say(done);
      reload();
    } catch (err) {
      b.disabled = false;
      ctx.say(`Undo failed: ${describe(err)}`);
    }
  });
  return b;
}

/** The "Not interested" section: each item with its Undo. */
function notInterestedSection(ctx: Ctx, ex: ExclusionList, reload: () => void): HTMLElement {
  return section(
    'Not interested',
    'Never shown again in for-you and discover; the author weighs less for a while. Undo brings the item back.',
    ex.not_interested.map((n) =>
      h(
        'li',
        {},
        link(n.item_id),
        ` by ${n.author_id} · ${isoMinute(n.at)} `,
        undo(
          ctx,
          `Undo ${n.item_id}`,
          () => ctx.client.feedback.undo(n.item_id),
          `${n.item_id} may be shown again.`,
          reload,
        ),
      ),
    ),
  );
}

/** The "Blocked authors" section: an Unblock for the authors this reader blocks (`mine`). */
function blockedSection(ctx: Ctx, ex: ExclusionList, mine: ReadonlySet<string>, reload: () => void): HTMLElement {
  return section(
    'Blocked authors',
    'Their items reach no feed of this reader (either way: an author who blocks the reader is listed too, without an unblock).',
    ex.blocked_authors.map((a) =>
      h(
        'li',
        {},
        a,
        ' ',
        mine.has(a)
          ? undo(ctx, `Unblock ${a}`, () => ctx.client.blocks.unblock(ctx.reader, a), `${a} is unblocked.`, reload)
          : h('span', { class: 'meta' }, '(blocks this reader)'),
      ),
    ),
  );
}

export const exclusionsPage: Page = (root, ctx) => {
  const status = statusLine();
  const load = async () => {
    try {
      const [ex, blocks] = await Promise.all([
        exclusions(ctx.client),
        ctx.client.blocks.list(ctx.reader, { limit: 200 }),
      ]);
      names = await titles(ctx, [...ex.not_interested.map((n) => n.item_id), ...ex.recently_viewed, ...ex.engaged]);
      const mine = new Set(blocks.users.map((u) => u.id));
      const reload = () => void load();
      status.textContent = '';
      replace(
        root,
        h('h2', {}, `Exclusions of ${ctx.reader}`),
        status,
        notInterestedSection(ctx, ex, reload),
        blockedSection(ctx, ex, mine, reload),
        section(
          'Recent views',
          'The last counted views: left out of for-you and discover until newer views push them out or they expire.',
          ex.recently_viewed.map((id) => h('li', {}, link(id))),
        ),
        section(
          'Engaged',
          'Replied to, liked or shared: left out of the ranked feeds for good.',
          ex.engaged.map((id) => h('li', {}, link(id))),
        ),
      );
    } catch (err) {
      replace(root, h('h2', {}, 'Exclusions'), status);
      status.textContent = `Could not load the exclusions: ${describe(err)}`;
    }
  };
  replace(root, h('h2', {}, `Exclusions of ${ctx.reader}`), status);
  status.textContent = 'Loading…';
  void load();
};
