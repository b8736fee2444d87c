/**
 * The one check of published items. Every edge that publishes — `POST /v1/items`, the library's
 * `publishItems`, `freshet import`, the simulations — reaches the `publishItems` use case, which calls
 * {@link validateItems} before anything is written; so an item one edge refuses, every edge refuses, with
 * the same code and the same field. Pure: no I/O.
 *
 * Fields are named the same way for every edge, by their place in the batch: `items[3].embedding`. The
 * HTTP schema of `POST /v1/items` states the same limits (it imports these constants) and names its own
 * failures `body/3/embedding`.
 *
 * Rules, in the order they are checked for each item (the first failure of the batch is reported):
 * - `id`, `authorId`: ids (`[A-Za-z0-9_.-]{1,64}`, not `.`/`..`) → INVALID_ID;
 * - `title` ≤ {@link MAX_TITLE_CHARS}, `text` ≤ {@link MAX_TEXT_CHARS} characters, no NUL character
 *   (PostgreSQL text cannot hold U+0000) in any text field;
 * - `url`: null, or an absolute http(s) URL with a host, ≤ {@link MAX_URL_CHARS};
 * - `tags`: ≤ {@link MAX_TAGS} strings of 1 to {@link MAX_TAG_CHARS} characters;
 * - `publishedAt`: integer epoch ms within the accepted time range (src/kernel/time-range.ts);
 * - `popularity`: a finite number ≥ 0;
 * - `lang` (optional): a BCP-47 language tag (`en`, `pt-BR`, `und`; src/kernel/items/lang.ts);
 * - `embedding` (optional): exactly `embeddingDim` finite numbers, not all zero, whose squared length is
 *   a finite positive double (so `v / ‖v‖` is a unit vector: 256 × 1e308 overflows, 256 × 1e-320 underflows);
 * - duplicate ids: **refused** — a batch naming one id twice is an application bug (which of the two
 *   did it mean?), so `items[5].id` "repeats items[2].id" and nothing is written. (The content store
 *   used to let the last one win; the use case refused: one rule now, this one.)
 */
import { fail } from '../errors.js';
import { preview } from '../preview.js';
import { isId, ID_RULE } from '../ids.js';
import { assertTimeInRange } from '../time-range.js';
import type { ItemInput } from './content-store.js';
import { assertLang } from './lang.js';

/** Longest title, in UTF-16 code units. */
export const MAX_TITLE_CHARS = 1000;
/** Longest text, in UTF-16 code units. */
export const MAX_TEXT_CHARS = 100_000;
/** Longest URL, in characters. */
export const MAX_URL_CHARS = 2048;
/** Most tags per item. */
export const MAX_TAGS = 32;
/** Longest tag, in characters. */
export const MAX_TAG_CHARS = 64;
/** Longest embedding the API accepts (the configured dimension must be ≤ this). */
export const MAX_EMBEDDING_DIM = 4096;

/** An item to publish: the item, and optionally its embedding (else computed from its text). */
export interface PublishInput extends ItemInput {
  /** The item embedding (`FRESHET_EMBEDDING_DIM` finite numbers, not all zero); absent → from the text. */
  embedding?: readonly number[];
}

/** What the rules depend on besides the items. */
export interface ItemRules {
  /** The configured embedding dimension (`FRESHET_EMBEDDING_DIM`). */
  embeddingDim: number;
  /** The wall clock now, epoch ms: the upper bound of `publishedAt` is this + `futureSkewMs`. */
  clockMs: number;
  /** How far past the clock `publishedAt` may be, ms (`FRESHET_FUTURE_SKEW_S`). */
  futureSkewMs: number;
}

/** The name of field `field` of the item at `index`: `items[3].embedding`. */
export function itemField(index: number, field: string): string {
  return `items[${index}].${field}`;
}

/**
 * Checks a batch of items against every rule of the module doc, before anything is written.
 * @returns the same items (typed), for chaining.
 * @throws FreshetError INVALID_ID (an id or author id) or INVALID_INPUT (any other field, a duplicate
 *   id), its message starting with the field's name (`items[3].embedding …`); the first failure of the batch.
 */
export function validateItems(items: readonly PublishInput[], rules: ItemRules): readonly PublishInput[] {
  items.forEach((item, i) => validateItem(item, i, rules));
  assertUniqueIds(items);
  return items;
}

/**
 * The batch rule on ids (see the module doc): refuses a batch naming one id twice.
 * @throws FreshetError INVALID_INPUT naming the second place (`items[5].id … repeats items[2].id`).
 */
export function assertUniqueIds(items: readonly { id: string }[]): void {
  const firstAt = new Map<string, number>();
  items.forEach((item, i) => {
    const first = firstAt.get(item.id);
    if (first !== undefined) {
      throw fail(
        'INVALID_INPUT',
        `${itemField(i, 'id')} ${JSON.stringify(item.id)} repeats ${itemField(first, 'id')}; send each id at most once per batch (nothing was written)`,
      );
    }
    firstAt.set(item.id, i);
  });
}

/** Checks one item (see the module doc); `i` is its index in the batch, for the field names. */
function validateItem(item: PublishInput, i: number, rules: ItemRules): void {
  const at = (field: string) => itemField(i, field);
  if (item === null || typeof item !== 'object')
    throw fail('INVALID_INPUT', `items[${i}] must be an object (got ${preview(item)})`);
  for (const field of ['id', 'authorId'] as const) {
    if (!isId(item[field]))
      throw fail('INVALID_ID', `${at(field)} ${preview(item[field])} is not a valid id: ids are ${ID_RULE}`);
  }
  text(item.title, at('title'), MAX_TITLE_CHARS);
  text(item.text, at('text'), MAX_TEXT_CHARS);
  if (item.url !== null) {
    text(item.url, at('url'), MAX_URL_CHARS);
    if (!isHttpUrl(item.url))
      throw fail(
        'INVALID_INPUT',
        `${at('url')} ${preview(item.url)} is not an absolute http:// or https:// URL with a host`,
      );
  }
  if (!Array.isArray(item.tags) || item.tags.length > MAX_TAGS)
    throw fail('INVALID_INPUT', `${at('tags')} must be a list of at most ${MAX_TAGS} tags`);
  item.tags.forEach((tag, t) => {
    text(tag, `${at('tags')}[${t}]`, MAX_TAG_CHARS);
    if (tag.length === 0)
      throw fail('INVALID_INPUT', `${at('tags')}[${t}] is empty; a tag has 1 to ${MAX_TAG_CHARS} characters`);
  });
  if (!Number.isSafeInteger(item.publishedAt))
    throw fail(
      'INVALID_INPUT',
      `${at('publishedAt')} must be an integer of epoch milliseconds (got ${preview(item.publishedAt)})`,
    );
  assertTimeInRange(item.publishedAt, at('publishedAt'), rules.clockMs, rules.futureSkewMs);
  if (typeof item.popularity !== 'number' || !Number.isFinite(item.popularity) || item.popularity < 0) {
    throw fail('INVALID_INPUT', `${at('popularity')} must be a finite number ≥ 0 (got ${preview(item.popularity)})`);
  }
  if (item.lang !== undefined) assertLang(item.lang, at('lang'));
  if (item.embedding !== undefined) checkEmbedding(item.embedding, at('embedding'), rules.embeddingDim);
}

/** A string of at most `max` UTF-16 code units without U+0000. */
function text(value: unknown, field: string, max: number): asserts value is string {
  if (typeof value !== 'string') throw fail('INVALID_INPUT', `${field} must be a string (got ${preview(value)})`);
  if (value.length > max)
    throw fail('INVALID_INPUT', `${field} must be at most ${max} characters (got ${value.length})`);
  if (value.includes('\u0000'))
    throw fail('INVALID_INPUT', `${field} holds a NUL character (\\u0000), which no store keeps; remove it`);
}

/** True for an absolute http(s) URL with a host. */
export function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0;
  } catch {
    return false;
  }
}

/**
 * An embedding of exactly `dim` finite components, not all zero, whose squared length Σ v_i² (in
 * doubles, as the discover feed's `normalize` computes it) is finite and positive: an item's, and a
 * reader's given by the application (`PUT /v1/users/:id/embedding`).
 * @throws FreshetError INVALID_INPUT naming `field` and what is wrong.
 */
export function checkEmbedding(v: unknown, field: string, dim: number): void {
  if (!Array.isArray(v) || v.length !== dim) {
    throw fail(
      'INVALID_INPUT',
      `${field} must have ${dim} components (FRESHET_EMBEDDING_DIM; got ${Array.isArray(v) ? v.length : preview(v)})`,
    );
  }
  let squares = 0;
  let zero = true;
  for (const x of v) {
    if (typeof x !== 'number' || !Number.isFinite(x))
      throw fail('INVALID_INPUT', `${field} must be finite numbers (got ${preview(x)})`);
    if (x !== 0) zero = false;
    squares += x * x;
  }
  if (zero)
    throw fail(
      'INVALID_INPUT',
      `${field} is all zeros: a vector with no direction cannot be searched; omit it to embed the text`,
    );
  if (!Number.isFinite(squares) || squares === 0) {
    throw fail(
      'INVALID_INPUT',
      `${field} cannot be normalised: its squared length overflows to infinity or underflows to 0 (components like 1e308 or 1e-320); send finite components of ordinary size, e.g. the unit vector`,
    );
  }
}
