/**
 * Publish a test item (service key): it goes through the same use case as any publish, so it reaches
 * the followers' timelines (fan-out), the for-you recall and discover's indexes.
 */
import type { ItemInput } from '../../client/index.js';
import type { Page } from '../context.js';
import { h, replace, statusLine } from '../dom.js';
import { describe } from '../extras.js';

/** A labelled input. */
function field(id: string, label: string, input: HTMLInputElement | HTMLTextAreaElement): HTMLElement {
  input.id = id;
  return h('p', { class: 'field' }, h('label', { for: id }, label), input);
}

/** The item the form's fields describe (tags comma-separated; the time ISO 8601 or epoch seconds). */
function itemOf(f: Record<'id' | 'author' | 'title' | 'text' | 'url' | 'tags' | 'at', { value: string }>): ItemInput {
  const at = f.at.value.trim();
  return {
    id: f.id.value.trim(),
    author_id: f.author.value.trim(),
    title: f.title.value,
    text: f.text.value,
    url: f.url.value.trim() || null,
    tags: f.tags.value
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
    published_at: /^\d+$/.test(at) ? Number(at) : at,
  };
}

export const publishPage: Page = (root, ctx) => {
  const status = statusLine();
  if (ctx.session.mode !== 'service') {
    replace(root, h('h2', {}, 'Publish'), h('p', {}, 'Publishing needs the service key: sign in with it.'));
    return;
  }
  const id = h('input', { required: true, value: `ui_${Date.now().toString(36)}`, pattern: '[A-Za-z0-9_:.\\-]{1,64}' });
  const author = h('input', { required: true, value: 'ui_author' });
  const title = h('input', { required: true, value: 'A test item from the explorer' });
  const text = h('textarea', { rows: 3 });
  const url = h('input', { type: 'url', placeholder: 'https://example.com/post' });
  const tags = h('input', { placeholder: 'comma, separated' });
  // ISO 8601 or epoch seconds; the server refuses a time past its clock + FRESHET_FUTURE_SKEW_S
  const at = h('input', { value: `${new Date().toISOString().slice(0, 19)}Z` });
  const form = h(
    'form',
    { class: 'publish' },
    field('pub-id', 'Id', id),
    field('pub-author', 'Author', author),
    field('pub-title', 'Title', title),
    field('pub-text', 'Text', text),
    field('pub-url', 'URL (optional)', url),
    field('pub-tags', 'Tags', tags),
    field('pub-at', 'Published at (ISO 8601 or epoch seconds)', at),
    h('button', { type: 'submit' }, 'Publish'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const r = await ctx.client.items.publish([itemOf({ id, author, title, text, url, tags, at })]);
      replace(
        status,
        `Published ${id.value} (${r.inserted ? 'new' : 'updated'}). `,
        h('a', { href: `#/item/${encodeURIComponent(id.value.trim())}` }, 'Open it'),
        `. Followers of ${author.value} see it in their following timeline once fan-out delivers it.`,
      );
      id.value = `ui_${Date.now().toString(36)}`;
    } catch (err) {
      status.textContent = `Publish failed: ${describe(err)}`;
    }
  });
  replace(
    root,
    h('h2', {}, 'Publish a test item'),
    h('p', { class: 'meta' }, `Follow its author as ${ctx.reader} first to see it arrive in the following timeline.`),
    form,
    status,
  );
};
