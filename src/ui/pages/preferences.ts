/**
 * The reader's preferences (docs/preferences.md): muted words (phrase, whole word or anywhere, hide or warn,
 * the feeds, an expiry), muted authors (with an expiry), the languages of the ranked feeds (and of the
 * following timeline), and the most items of one author per page. Every change is one
 * `PATCH /v1/users/:id/preferences` (entry by entry, atomic on the server: a mute made meanwhile from a
 * card or another device is never lost), and the page shows the document the server answers. A refused
 * change shows the server's sentence, which names the field; nothing is stored then.
 *
 * Expiries are computed from this browser's clock and shown as UTC times: on a server running on virtual
 * time (`X-Freshet-Now`, replays) a mute lasts until that absolute time.
 */
import type { PreferencesData, PreferencesPatchInput } from '../../client/index.js';
import type { Page } from '../context.js';
import { h, isoMinute, replace, statusLine } from '../dom.js';
import { describe } from '../extras.js';

const FEEDS = [
  ['for-you', 'For you'],
  ['discover', 'Discover'],
  ['following', 'Following'],
  ['hot', 'Hot'],
] as const;

/** The expiry choices: label → seconds from now (0: never). */
const EXPIRIES: [string, number][] = [
  ['Never', 0],
  ['1 hour', 3600],
  ['1 day', 86_400],
  ['7 days', 7 * 86_400],
  ['30 days', 30 * 86_400],
];

/** A select of {@link EXPIRIES} (`id` for its label). */
function expirySelect(id: string): HTMLSelectElement {
  return h(
    'select',
    { id },
    EXPIRIES.map(([label, s]) => h('option', { value: String(s) }, label)),
  );
}

/** The epoch seconds a select's choice ends at, or null (never). */
const expiryOf = (sel: HTMLSelectElement) =>
  Number(sel.value) > 0 ? Math.floor(Date.now() / 1000) + Number(sel.value) : null;

const until = (expiresAt: number | null) => (expiresAt === null ? 'for good' : `until ${isoMinute(expiresAt)}`);

/** A labelled field (label above its control). */
const field = (label: string, id: string, control: HTMLElement) =>
  h('p', { class: 'field' }, h('label', { for: id }, label), control);

export const preferencesPage: Page = (root, ctx) => {
  const status = statusLine();
  const body = h('div', { class: 'prefs' });
  /** Sends one patch; renders the answer, or says why it was refused. */
  const patch = async (p: PreferencesPatchInput, done: string): Promise<boolean> => {
    try {
      render(await ctx.client.users.updatePreferences(ctx.reader, p));
      ctx.say(done);
      return true;
    } catch (err) {
      status.textContent = `Not saved: ${describe(err)}`;
      return false;
    }
  };
  const render = (doc: PreferencesData) => {
    status.textContent = '';
    replace(
      body,
      wordsSection(doc, patch),
      authorsSection(doc, patch),
      languagesSection(doc, patch),
      capSection(doc, patch),
    );
  };
  replace(
    root,
    h('h2', {}, `Preferences of ${ctx.reader}`),
    h(
      'p',
      { class: 'meta' },
      'Applied from the next page of every feed. Each change is saved at once. Muting is not blocking: a muted author is not told and still sees this reader’s items.',
    ),
    status,
    body,
  );
  status.textContent = 'Loading…';
  void ctx.client.users.preferences(ctx.reader).then(render, (err: unknown) => {
    status.textContent = `Could not load the preferences: ${describe(err)}`;
  });
};

type Patch = (p: PreferencesPatchInput, done: string) => Promise<boolean>;

/** A removal button that sends `p`. */
function removeButton(label: string, p: PreferencesPatchInput, done: string, send: Patch): HTMLButtonElement {
  const b = h('button', { type: 'button', class: 'small', 'data-action': 'remove' }, label);
  b.addEventListener('click', async () => {
    b.disabled = true;
    if (!(await send(p, done))) b.disabled = false;
  });
  return b;
}

/** The muted words: the form that mutes one, and each muted word with its Unmute. */
function wordsSection(doc: PreferencesData, send: Patch): HTMLElement {
  const rows = doc.muted_words.map((w) =>
    h(
      'li',
      { 'data-phrase': w.phrase },
      h('strong', {}, `“${w.phrase}”`),
      h(
        'span',
        { class: 'meta' },
        ` · ${w.whole_word ? 'whole words' : 'anywhere'} · ${w.action === 'warn' ? 'warn' : 'hide'} · ${
          w.feeds ? w.feeds.join(', ') : 'every feed'
        } · ${until(w.expires_at)} `,
      ),
      removeButton(`Unmute “${w.phrase}”`, { remove_muted_words: [w.phrase] }, `Unmuted “${w.phrase}”.`, send),
    ),
  );
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': 'words-title' },
    h('h3', { id: 'words-title' }, `Muted words (${doc.muted_words.length} of 200)`),
    h(
      'p',
      { class: 'meta' },
      'Case and accents are ignored; a phrase matches its words in order. Hide: the item never reaches this reader there. Warn: it is delivered folded behind the phrase.',
    ),
    muteWordForm(send),
    rows.length ? h('ul', { class: 'rows', 'data-testid': 'muted-words' }, rows) : h('p', {}, 'No muted words.'),
  );
}

/** The form that mutes a word or phrase: its action, expiry, feeds and whole-word switch. */
function muteWordForm(send: Patch): HTMLFormElement {
  const phrase = h('input', { id: 'word-phrase', required: true, maxlength: 100, autocomplete: 'off' });
  const whole = h('input', { id: 'word-whole', type: 'checkbox', checked: true });
  const action = h(
    'select',
    { id: 'word-action' },
    h('option', { value: 'hide' }, 'Hide the item'),
    h('option', { value: 'warn' }, 'Show it collapsed, with a warning'),
  );
  const feeds = FEEDS.map(([f, label]) => ({
    f,
    box: h('input', { id: `word-feed-${f}`, type: 'checkbox', checked: true, value: f }),
    label,
  }));
  const expires = expirySelect('word-expires');
  const form = h(
    'form',
    { class: 'add', 'aria-label': 'Mute a word' },
    field('Word or phrase', 'word-phrase', phrase),
    field('Action', 'word-action', action),
    field('Expires', 'word-expires', expires),
    h(
      'fieldset',
      { class: 'feeds' },
      h('legend', {}, 'Feeds'),
      feeds.map(({ f, box, label }) => h('label', { for: `word-feed-${f}` }, box, ` ${label}`)),
    ),
    h('p', { class: 'check' }, h('label', { for: 'word-whole' }, whole, ' Whole words only (off: also inside words)')),
    h('button', { type: 'submit' }, 'Mute word'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const chosen = feeds.filter((x) => x.box.checked).map((x) => x.f);
    const ok = await send(
      {
        add_muted_words: [
          {
            phrase: phrase.value.trim(),
            whole_word: whole.checked,
            action: action.value as 'hide' | 'warn',
            expires_at: expiryOf(expires),
            feeds: chosen.length === FEEDS.length ? null : chosen,
          },
        ],
      },
      `Muted “${phrase.value.trim()}”.`,
    );
    if (ok) document.getElementById('word-phrase')?.focus();
  });
  return form;
}

function authorsSection(doc: PreferencesData, send: Patch): HTMLElement {
  const author = h('input', { id: 'author-id', required: true, maxlength: 64, autocomplete: 'off' });
  const expires = expirySelect('author-expires');
  const form = h(
    'form',
    { class: 'add', 'aria-label': 'Mute an author' },
    field('Author id', 'author-id', author),
    field('Expires', 'author-expires', expires),
    h('button', { type: 'submit' }, 'Mute author'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const id = author.value.trim();
    await send({ add_muted_authors: [{ author_id: id, expires_at: expiryOf(expires) }] }, `Muted ${id}.`);
  });
  const rows = doc.muted_authors.map((a) =>
    h(
      'li',
      { 'data-author': a.author_id },
      h('strong', {}, a.author_id),
      h('span', { class: 'meta' }, ` · ${until(a.expires_at)} `),
      removeButton(`Unmute ${a.author_id}`, { remove_muted_authors: [a.author_id] }, `Unmuted ${a.author_id}.`, send),
    ),
  );
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': 'authors-title' },
    h('h3', { id: 'authors-title' }, `Muted authors (${doc.muted_authors.length} of 1,000)`),
    form,
    rows.length ? h('ul', { class: 'rows', 'data-testid': 'muted-authors' }, rows) : h('p', {}, 'No muted authors.'),
  );
}

function languagesSection(doc: PreferencesData, send: Patch): HTMLElement {
  const langs = h('input', {
    id: 'languages',
    value: (doc.languages ?? []).join(', '),
    placeholder: 'every language',
    autocomplete: 'off',
    'aria-describedby': 'languages-hint',
  });
  const following = h('input', { id: 'languages-following', type: 'checkbox', checked: doc.languages_in_following });
  const form = h(
    'form',
    { class: 'add', 'aria-label': 'Languages' },
    field('Languages', 'languages', langs),
    h(
      'p',
      { class: 'check' },
      h('label', { for: 'languages-following' }, following, ' Also in the following timeline'),
    ),
    h('button', { type: 'submit' }, 'Save languages'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const list = langs.value
      .split(/[\s,]+/)
      .map((x) => x.trim())
      .filter((x) => x.length > 0);
    await send(
      { languages: list.length ? list : null, languages_in_following: following.checked },
      list.length ? `Only ${list.join(', ')} from now on.` : 'Every language from now on.',
    );
  });
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': 'languages-title' },
    h('h3', { id: 'languages-title' }, 'Languages'),
    h(
      'p',
      { class: 'meta' },
      'Items in other languages leave for-you, discover and hot; items of unknown language stay.',
    ),
    form,
  );
}

function capSection(doc: PreferencesData, send: Patch): HTMLElement {
  const cap = h('input', {
    id: 'max-per-author',
    type: 'number',
    min: 0,
    max: 20,
    value: doc.max_per_author ?? '',
    placeholder: 'default (2)',
    'aria-describedby': 'cap-hint',
  });
  const form = h(
    'form',
    { class: 'add', 'aria-label': 'Items per author' },
    field('Most items of one author per 20', 'max-per-author', cap),
    h('button', { type: 'submit' }, 'Save'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const v = cap.value.trim() === '' ? null : Number(cap.value);
    await send({ max_per_author: v }, v === null ? 'The default cap applies.' : `At most ${v} per 20 items.`);
  });
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': 'cap-title' },
    h('h3', { id: 'cap-title' }, 'Items per author'),
    h(
      'p',
      { class: 'meta', id: 'cap-hint' },
      'Keeps one prolific author from filling a page of for-you or discover. 0: no limit; empty: the default.',
    ),
    form,
  );
}
