/**
 * The explain of one item for one reader and feed (`GET /v1/feeds/{feed}/explain?item_id=…`, docs/api.md),
 * rendered the same way wherever it shows: the "Why?" panel of a card or a hot row, and the operator's
 * "Why not?" box (`#/why`, the item page). It says whether the item is eligible, each rule that removes it
 * with the server's plain-English reason (a `seen` rule reads "Served to you on <day>; it will not come
 * back"), why a served item was shown (its rank were it not served yet), the notes, the score's parts as a
 * small table and the rank. Text only (`textContent`), never HTML.
 */
import type { ExplainData, ExplainFeedName, FreshetClient } from '../client/index.js';
import type { Ctx } from './context.js';
import { dayOf, h, isoMinute } from './dom.js';
import { describe } from './extras.js';

/** The feeds that answer an explain (the path segment of the route). */
export type ExplainFeed = ExplainFeedName;
/** The feeds, in the navigation's order (the "Why not?" box's choices). */
export const EXPLAIN_FEEDS: readonly ExplainFeed[] = ['for-you', 'discover', 'following', 'hot'];

/** One rule (or note) of an explain: its name, the server's sentence, and the rule's own fields. */
export type ExplainRule = ExplainData['rules'][number];

/**
 * Asks the server to explain `itemId` in `feed` for the client's reader (`reader` overrides it: the
 * service key acts for any reader; a reader token only for itself, the server answers 403 otherwise);
 * `range`: the hot list's range the page shows (hot only).
 * @throws FreshetClientError with the server's code and sentence (404 unknown item, 400 bad input).
 */
export function explainItem(
  client: FreshetClient,
  feed: ExplainFeed,
  itemId: string,
  reader?: string,
  range?: string,
): Promise<ExplainData> {
  return client.explain(feed, itemId, { ...(reader ? { reader } : {}), ...(range ? { range } : {}) });
}

/** " on 29 Feb 2016" for a seen rule's `day` (the UTC day `YYYY-MM-DD` of the filter holding it), else "". */
function onDay(day: unknown): string {
  const ms = typeof day === 'string' ? Date.parse(`${day}T00:00:00Z`) : Number.NaN;
  return Number.isFinite(ms) ? ` on ${dayOf(ms / 1000)}` : '';
}

/**
 * The sentence of one rule: `seen` in the reader's words ("Served to you on 29 Feb 2016; it will not come
 * back"; a per-reader filter has no day), the others as the server says them.
 */
function ruleText(r: ExplainRule, reader: string, self: boolean): string {
  if (r.rule !== 'seen') return r.reason;
  return `Served to ${self ? 'you' : reader}${onDay(r.day)}; it will not come back.`;
}

/** A false-positive rate in [0, 1] as a percentage: "0.12%", or "< 0.01%" below that. */
function rate(fpr: number): string {
  return fpr < 0.0001 ? '< 0.01%' : `${Number((fpr * 100).toPrecision(2))}%`;
}

/**
 * The extra fields of a rule as "name: value" (not `rule`, `reason`, nor a seen rule's `day`, already said;
 * `fpr` as "false-positive rate 0.12%").
 */
function fieldsOf(r: ExplainRule): string {
  return Object.entries(r)
    .filter(([k, v]) => k !== 'rule' && k !== 'reason' && !(r.rule === 'seen' && k === 'day') && v !== null)
    .map(([k, v]) =>
      k === 'fpr' && typeof v === 'number'
        ? `false-positive rate ${rate(v)}`
        : `${k}: ${typeof v === 'number' ? num(v) : typeof v === 'object' ? JSON.stringify(v) : String(v)}`,
    )
    .join(' · ');
}

/** A list of rules or notes, each "rule-name — sentence" with its fields in small print. */
function ruleList(rules: readonly ExplainRule[], testid: string, reader: string, self: boolean): HTMLElement {
  return h(
    'ul',
    { class: 'rules', 'data-testid': testid },
    rules.map((r) => {
      const extra = fieldsOf(r);
      return h(
        'li',
        { 'data-rule': r.rule },
        h('code', {}, r.rule),
        ' ',
        ruleText(r, reader, self),
        extra ? h('span', { class: 'meta' }, ` (${extra})`) : null,
      );
    }),
  );
}

/** A number of a score part, short: 3 significant digits, integers as they are (a text part as it is). */
function num(n: number | string): string {
  return typeof n === 'string' || Number.isInteger(n) ? String(n) : n.toPrecision(3);
}

/**
 * Why a served item was shown: where it would rank now were it not served yet (its score, below, is
 * computed as if unseen); null when the item was not served.
 */
function servedText(e: ExplainData): HTMLElement | null {
  if (!e.served) return null;
  const why =
    e.served.rank_if_unseen === null
      ? 'Why it was shown: another rule would keep it out now, served or not.'
      : `Why it was shown: were it not served yet, it would rank #${e.served.rank_if_unseen} in ${e.feed} now (its score below is as if unseen).`;
  return h('p', { class: 'meta', 'data-testid': 'explain-served' }, why);
}

/**
 * The score table's caption: its value, or — for an item past for-you's decay window, which the walk serves
 * newest first — that order and its publication time (its value, a decay near 0, orders nothing).
 */
function scoreCaption(score: NonNullable<ExplainData['score']>): string {
  const published = score.parts.published_at_ms;
  if (score.parts.source === 'older' && typeof published === 'number')
    return `Older than the decay window: served newest first (published ${isoMinute(Math.floor(published / 1000))})`;
  return `Score ${num(score.value)}`;
}

/**
 * The explain as a block of elements. `self`: the viewer is the explained reader (the cards' "Why?"),
 * so a seen rule reads "Served to you"; the "Why not?" box names the reader instead.
 */
export function explainView(e: ExplainData, self = true): HTMLElement {
  const verdict = e.eligible
    ? `Eligible: ${e.feed} can serve ${e.item_id} to ${e.reader_id}.`
    : `Not eligible: ${e.rules.length === 1 ? 'one rule removes' : `${e.rules.length} rules remove`} ${e.item_id} from ${e.reader_id}'s ${e.feed}.`;
  const parts = e.score ? Object.entries(e.score.parts) : [];
  return h(
    'div',
    { class: 'explain', 'data-testid': 'explain', 'data-eligible': String(e.eligible) },
    h('p', { class: e.eligible ? 'verdict ok' : 'verdict no' }, verdict),
    e.rules.length ? ruleList(e.rules, 'explain-rules', e.reader_id, self) : null,
    servedText(e),
    e.notes?.length
      ? [h('p', { class: 'meta' }, 'Notes'), ruleList(e.notes, 'explain-notes', e.reader_id, self)]
      : null,
    e.score
      ? h(
          'table',
          { class: 'score', 'data-testid': 'explain-score' },
          h('caption', {}, scoreCaption(e.score)),
          h(
            'tbody',
            {},
            parts.map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', { class: 'num' }, num(v)))),
          ),
        )
      : h('p', { class: 'meta' }, 'Not scored in this feed.'),
    h(
      'p',
      { class: 'meta', 'data-testid': 'explain-rank' },
      e.rank === null ? 'Not ranked now.' : `Rank ${e.rank} in ${e.feed}.`,
      ` Explained at ${isoMinute(Math.floor(e.at_ms / 1000))}.`,
    ),
  );
}

/**
 * A "Why?" toggle for a card or a hot row: the first press fetches the explain of `itemId` in `feed` for
 * the page's reader and shows it in `panel` (an error shows the server's sentence); the next press hides it,
 * the one after asks again (the answer changes as the reader is served items). `range` (the Hot page): the
 * range its list shows, read at each press.
 */
export function whyButton(
  ctx: Ctx,
  feed: ExplainFeed,
  itemId: string,
  panel: HTMLElement,
  range?: () => string,
): HTMLButtonElement {
  const b = h('button', { type: 'button', class: 'small', 'data-action': 'why', 'aria-expanded': 'false' }, 'Why?');
  panel.hidden = true;
  b.addEventListener('click', async () => {
    if (!panel.hidden) {
      panel.hidden = true;
      b.setAttribute('aria-expanded', 'false');
      return;
    }
    b.disabled = true;
    try {
      panel.replaceChildren(explainView(await explainItem(ctx.client, feed, itemId, undefined, range?.())));
    } catch (err) {
      panel.replaceChildren(h('p', { class: 'bad', 'data-testid': 'explain-error' }, describe(err)));
    } finally {
      b.disabled = false;
    }
    panel.hidden = false;
    b.setAttribute('aria-expanded', 'true');
  });
  return b;
}
