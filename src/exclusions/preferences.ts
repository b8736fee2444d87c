/**
 * A reader's preferences (docs/preferences.md): muted words, muted authors, languages and the
 * author cap of the ranked feeds — one document per reader, replaced whole by `PUT
 * /v1/users/:id/preferences`. This module is the one check of that document (every edge: HTTP, library)
 * and its JSON form. Pure: no I/O.
 *
 * Limits: at most {@link MAX_MUTED_WORDS} muted words of 1 to {@link MAX_PHRASE_CHARS} characters holding at
 * least one letter or digit; at most {@link MAX_MUTED_AUTHORS} muted authors; at most {@link MAX_LANGUAGES}
 * languages, each an ISO 639-1 code (a BCP-47 primary tag of two letters: `pt-BR` is taken as `pt`);
 * `max_per_author` 0 (off) to {@link MAX_PER_AUTHOR_LIMIT}. An expiry must be in the future of the request and
 * at most 2100-01-01 ({@link MAX_EXPIRY_S}).
 */
import { fail } from '../kernel/errors.js';
import { isId, ID_RULE } from '../kernel/ids.js';
import { PREFERENCE_FEEDS, type PreferenceFeed } from '../kernel/exclusion-source.js';
import { ISO_639_1, primaryTag } from '../kernel/items/lang.js';
import { DIVERSITY_PAGE } from '../kernel/author-diversity.js';
import { MAX_TIME_MS } from '../kernel/time-range.js';
import { phraseWords } from './muted-words.js';

/** Most muted words per reader (Bluesky and Mastodon keep lists of this order). */
export const MAX_MUTED_WORDS = 200;
/** Longest muted phrase, characters. */
export const MAX_PHRASE_CHARS = 100;
/** Most muted authors per reader. */
export const MAX_MUTED_AUTHORS = 1000;
/** Most languages in a reader's list. */
export const MAX_LANGUAGES = 20;
/** Highest `max_per_author` (a page of 20 from one author is no cap at all). */
export const MAX_PER_AUTHOR_LIMIT = DIVERSITY_PAGE;
/** Latest expiry of a mute, epoch seconds: 2100-01-01T00:00:00Z ({@link MAX_TIME_MS}). */
export const MAX_EXPIRY_S = MAX_TIME_MS / 1000;
/** `max_per_author` of a reader who never set it (`FRESHET_MAX_PER_AUTHOR`'s default): 2 per page of 20. */
export const DEFAULT_MAX_PER_AUTHOR = 2;

/**
 * What a muted word does to an item that holds it (Mastodon's `filter_action`): `hide` — the item never
 * reaches the reader in those feeds; `warn` — it is delivered with `filtered: [phrase, …]`, so the client can
 * collapse it behind the phrase.
 */
export const MUTE_ACTIONS = ['hide', 'warn'] as const;
/** One of {@link MUTE_ACTIONS}. */
export type MuteAction = (typeof MUTE_ACTIONS)[number];

/** One muted word or phrase. */
export interface MutedWord {
  phrase: string;
  /** Match on word boundaries (true) or as a substring (false). */
  wholeWord: boolean;
  /** Hide the item (the default) or deliver it with a warning; absent in documents stored before `warn`: hide. */
  action?: MuteAction;
  /** When the mute ends, epoch ms; null: never. */
  expiresAtMs: number | null;
  /** The feeds it applies to; null: all of them. */
  feeds: PreferenceFeed[] | null;
}

/** One muted author: hidden from every feed without a block. */
export interface MutedAuthor {
  authorId: string;
  /** When the mute ends, epoch ms; null: never. */
  expiresAtMs: number | null;
}

/** A reader's preferences (the stored form). */
export interface Preferences {
  mutedWords: MutedWord[];
  mutedAuthors: MutedAuthor[];
  /** Primary tags of the languages the ranked feeds keep; null: all. */
  languages: string[] | null;
  /** Whether the language list applies to the following timeline too. */
  languagesInFollowing: boolean;
  /** Most items of one author per 20 of a ranked page; 0: no cap; null: the operator's default. */
  maxPerAuthor: number | null;
}

/** The preferences of a reader who never set any. */
export const DEFAULT_PREFERENCES: Preferences = Object.freeze({
  mutedWords: [],
  mutedAuthors: [],
  languages: null,
  languagesInFollowing: false,
  maxPerAuthor: null,
}) as Preferences;

/** The JSON form (snake_case, epoch seconds), as `GET` answers and `PUT` takes it. */
export interface PreferencesJson {
  muted_words: {
    phrase: string;
    whole_word: boolean;
    expires_at: number | null;
    feeds: PreferenceFeed[] | null;
    action: MuteAction;
  }[];
  muted_authors: { author_id: string; expires_at: number | null }[];
  languages: string[] | null;
  languages_in_following: boolean;
  /** null: the operator's default (`FRESHET_MAX_PER_AUTHOR`, 2). */
  max_per_author: number | null;
}

/** Whether an entry with this expiry still applies at `nowMs`. */
export const live = (expiresAtMs: number | null, nowMs: number) => expiresAtMs === null || expiresAtMs > nowMs;

/**
 * The JSON form of `p` at `nowMs`: entries whose expiry has passed are left out (they no longer apply,
 * and a client that sends the document back must not be refused for them).
 */
export function preferencesToJson(p: Preferences, nowMs: number): PreferencesJson {
  const s = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));
  return {
    muted_words: p.mutedWords
      .filter((w) => live(w.expiresAtMs, nowMs))
      .map((w) => ({
        phrase: w.phrase,
        whole_word: w.wholeWord,
        expires_at: s(w.expiresAtMs),
        feeds: w.feeds,
        action: w.action ?? 'hide',
      })),
    muted_authors: p.mutedAuthors
      .filter((a) => live(a.expiresAtMs, nowMs))
      .map((a) => ({ author_id: a.authorId, expires_at: s(a.expiresAtMs) })),
    languages: p.languages,
    languages_in_following: p.languagesInFollowing,
    max_per_author: p.maxPerAuthor,
  };
}

/** The refusal of a field (400, 40001): `<field> <msg>; nothing was stored`. */
export const bad = (field: string, msg: string) => fail('INVALID_INPUT', `${field} ${msg}; nothing was stored`);

/** An object (not an array, not null). @throws FreshetError INVALID_INPUT naming `field`. */
export function obj(v: unknown, field: string): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw bad(field, 'must be an object');
  return v as Record<string, unknown>;
}

/** A list of at most `max` entries (absent or null → []). @throws FreshetError INVALID_INPUT naming `field`. */
export function list(v: unknown, field: string, max: number): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw bad(field, 'must be a list');
  if (v.length > max) throw bad(field, `holds ${v.length} entries; at most ${max} are allowed`);
  return v;
}

/**
 * An optional expiry in epoch seconds, after `nowMs` and at most 2100-01-01 (the kernel's
 * {@link MAX_TIME_MS}, the bound of every time Freshet takes); returns ms or null. A bound is needed: 1e306 s
 * is finite, but Infinity once in ms, and was stored as a permanent mute.
 */
function expiry(v: unknown, field: string, nowMs: number): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw bad(field, 'must be epoch seconds or null');
  if (v > MAX_EXPIRY_S)
    throw bad(field, `(${v}) is past 2100-01-01 (${MAX_EXPIRY_S}): send null for a mute that never ends`);
  const ms = Math.round(v * 1000);
  if (ms <= nowMs) throw bad(field, `(${v}) is not in the future (now is ${Math.floor(nowMs / 1000)})`);
  return ms;
}

/** One muted word of the JSON form, checked (`field` names it in errors). @throws FreshetError INVALID_INPUT. */
export function parseWord(v: unknown, field: string, nowMs: number): MutedWord {
  const w = obj(v, field);
  const phrase = w.phrase;
  if (typeof phrase !== 'string') throw bad(`${field}.phrase`, 'must be a string');
  if (phrase.length > MAX_PHRASE_CHARS)
    throw bad(`${field}.phrase`, `is ${phrase.length} characters long; at most ${MAX_PHRASE_CHARS}`);
  if (phraseWords(phrase).length === 0) throw bad(`${field}.phrase`, 'is empty: it must hold a letter or a digit');
  if (w.whole_word !== undefined && typeof w.whole_word !== 'boolean')
    throw bad(`${field}.whole_word`, 'must be true or false');
  let feeds: PreferenceFeed[] | null = null;
  if (w.feeds !== undefined && w.feeds !== null) {
    const fs = list(w.feeds, `${field}.feeds`, PREFERENCE_FEEDS.length);
    fs.forEach((f, i) => {
      if (!PREFERENCE_FEEDS.includes(f as PreferenceFeed))
        throw bad(`${field}.feeds[${i}]`, `must be one of ${PREFERENCE_FEEDS.join(', ')}`);
    });
    if (fs.length === 0) throw bad(`${field}.feeds`, 'is empty: leave it out (or null) for every feed');
    feeds = [...new Set(fs as PreferenceFeed[])];
  }
  if (w.action !== undefined && !MUTE_ACTIONS.includes(w.action as MuteAction))
    throw bad(`${field}.action`, `must be one of ${MUTE_ACTIONS.join(', ')}`);
  for (const k of Object.keys(w))
    if (!['phrase', 'whole_word', 'expires_at', 'feeds', 'action'].includes(k))
      throw bad(`${field}.${k}`, 'is not a field');
  return {
    phrase: phrase.trim(),
    wholeWord: w.whole_word !== false,
    action: (w.action as MuteAction | undefined) ?? 'hide',
    expiresAtMs: expiry(w.expires_at, `${field}.expires_at`, nowMs),
    feeds,
  };
}

/** One muted author of the JSON form, checked. @throws FreshetError INVALID_INPUT naming `field`. */
export function parseAuthor(v: unknown, field: string, nowMs: number): MutedAuthor {
  const a = obj(v, field);
  if (!isId(a.author_id)) throw bad(`${field}.author_id`, `must be an id (${ID_RULE})`);
  for (const k of Object.keys(a))
    if (!['author_id', 'expires_at'].includes(k)) throw bad(`${field}.${k}`, 'is not a field');
  return { authorId: a.author_id as string, expiresAtMs: expiry(a.expires_at, `${field}.expires_at`, nowMs) };
}

/** A language list (null or absent: all), as primary tags, de-duplicated. @throws FreshetError INVALID_INPUT. */
export function parseLanguages(v: unknown, field: string): string[] | null {
  if (v === undefined || v === null) return null;
  const tags = list(v, field, MAX_LANGUAGES).map((t, i) => {
    const p = primaryTag(t);
    if (p === null || !ISO_639_1.has(p))
      throw bad(
        `${field}[${i}]`,
        `(${JSON.stringify(t)?.slice(0, 40)}) is not a known language: use ISO 639-1 codes such as "en", "de", "zh"`,
      );
    return p;
  });
  if (tags.length === 0) throw bad(field, 'is empty: send null for every language');
  return [...new Set(tags)];
}

/**
 * The one check of a preferences document (the JSON form), at the request's time `nowMs`. Fields left out
 * take their defaults ({@link DEFAULT_PREFERENCES}); a muted author or phrase given twice is kept once (the
 * later entry wins).
 * @throws FreshetError INVALID_INPUT naming the field (`muted_words[3].phrase`): too many entries, an empty
 *   or too long phrase, an unknown feed or language, a bad id, an expiry not in the future, an unknown field.
 */
export function parsePreferences(body: unknown, nowMs: number): Preferences {
  const b = obj(body, 'body');
  for (const k of Object.keys(b)) {
    if (!['muted_words', 'muted_authors', 'languages', 'languages_in_following', 'max_per_author'].includes(k))
      throw bad(k, 'is not a field of the preferences');
  }
  const words = list(b.muted_words, 'muted_words', MAX_MUTED_WORDS).map((w, i) =>
    parseWord(w, `muted_words[${i}]`, nowMs),
  );
  const authors = list(b.muted_authors, 'muted_authors', MAX_MUTED_AUTHORS).map((a, i) =>
    parseAuthor(a, `muted_authors[${i}]`, nowMs),
  );
  if (b.languages_in_following !== undefined && typeof b.languages_in_following !== 'boolean')
    throw bad('languages_in_following', 'must be true or false');
  return {
    mutedWords: [...new Map(words.map((w) => [wordKey(w), w])).values()],
    mutedAuthors: [...new Map(authors.map((a) => [a.authorId, a])).values()],
    languages: parseLanguages(b.languages, 'languages'),
    languagesInFollowing: b.languages_in_following === true,
    maxPerAuthor: parseMaxPerAuthor(b.max_per_author),
  };
}

/** What makes two muted words the same entry: the folded words of the phrase and whether they match whole. */
export const wordKey = (w: Pick<MutedWord, 'phrase' | 'wholeWord'>) =>
  `${w.wholeWord}:${phraseWords(w.phrase).join(' ')}`;

/** `max_per_author`: null (absent) or an integer 0–{@link MAX_PER_AUTHOR_LIMIT}. @throws FreshetError INVALID_INPUT. */
export function parseMaxPerAuthor(v: unknown): number | null {
  const m = v ?? null;
  if (m !== null && (typeof m !== 'number' || !Number.isInteger(m) || m < 0 || m > MAX_PER_AUTHOR_LIMIT))
    throw bad('max_per_author', `must be an integer from 0 (off) to ${MAX_PER_AUTHOR_LIMIT}`);
  return m as number | null;
}
