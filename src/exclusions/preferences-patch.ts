/**
 * `PATCH /v1/users/:id/preferences`: edits a reader's preferences entry by entry, so two devices (or a
 * card's "Mute author" and the preferences page) editing at once both land — a whole-document `PUT` built
 * from an earlier `GET` would drop the other's change. The store applies a patch to the current document
 * inside one transaction with the reader's row locked (ExclusionStore.updatePreferences). Pure: no I/O.
 *
 * A patch holds any of:
 * - `add_muted_words`: entries as in `muted_words`; one with the same phrase (folded) and `whole_word` as an
 *   existing entry replaces it (its expiry, feeds and action);
 * - `remove_muted_words`: phrases; every entry whose folded phrase is the same goes (either `whole_word`);
 * - `add_muted_authors` (an author already muted gets the new expiry) and `remove_muted_authors` (ids);
 * - `languages`, `languages_in_following`, `max_per_author`: replaced when present.
 * Removals apply before additions. Removing what is not there is no error. The result must hold within the
 * document's limits (200 words, 1,000 authors); entries whose expiry passed are dropped first.
 */
import { isId } from '../kernel/ids.js';
import { phraseWords } from './muted-words.js';
import {
  bad,
  list,
  live,
  MAX_MUTED_AUTHORS,
  MAX_MUTED_WORDS,
  MAX_PHRASE_CHARS,
  obj,
  parseAuthor,
  parseLanguages,
  parseMaxPerAuthor,
  parseWord,
  wordKey,
  type Preferences,
} from './preferences.js';

/** The fields a patch may hold. */
export const PATCH_FIELDS = [
  'add_muted_words',
  'remove_muted_words',
  'add_muted_authors',
  'remove_muted_authors',
  'languages',
  'languages_in_following',
  'max_per_author',
] as const;

/** Removal lists are bounded like the lists they edit (a patch may empty a full document). */
function removals(v: unknown, field: string, max: number, check: (s: string) => boolean, rule: string): string[] {
  return list(v, field, max).map((x, i) => {
    if (typeof x !== 'string' || !check(x)) throw bad(`${field}[${i}]`, rule);
    return x;
  });
}

/**
 * `current` with the patch `body` applied at `nowMs` (see the module doc).
 * @throws FreshetError INVALID_INPUT naming the field (`add_muted_words[2].phrase`, `muted_words` when the
 *   result holds too many): nothing is stored.
 */
export function applyPreferencesPatch(current: Preferences, body: unknown, nowMs: number): Preferences {
  const b = obj(body, 'body');
  for (const k of Object.keys(b))
    if (!(PATCH_FIELDS as readonly string[]).includes(k))
      throw bad(k, `is not a field of a preferences patch (${PATCH_FIELDS.join(', ')})`);
  const addWords = list(b.add_muted_words, 'add_muted_words', MAX_MUTED_WORDS).map((w, i) =>
    parseWord(w, `add_muted_words[${i}]`, nowMs),
  );
  const dropPhrases = new Set(
    removals(
      b.remove_muted_words,
      'remove_muted_words',
      MAX_MUTED_WORDS,
      (x) => x.length <= MAX_PHRASE_CHARS,
      `must be a phrase of at most ${MAX_PHRASE_CHARS} characters`,
    ).map((x) => phraseWords(x).join(' ')),
  );
  const addAuthors = list(b.add_muted_authors, 'add_muted_authors', MAX_MUTED_AUTHORS).map((a, i) =>
    parseAuthor(a, `add_muted_authors[${i}]`, nowMs),
  );
  const dropAuthors = new Set(
    removals(b.remove_muted_authors, 'remove_muted_authors', MAX_MUTED_AUTHORS, isId, 'must be an id'),
  );
  if (b.languages_in_following !== undefined && typeof b.languages_in_following !== 'boolean')
    throw bad('languages_in_following', 'must be true or false');

  const added = new Set(addWords.map(wordKey));
  const words = [
    ...current.mutedWords.filter(
      (w) => live(w.expiresAtMs, nowMs) && !dropPhrases.has(phraseWords(w.phrase).join(' ')) && !added.has(wordKey(w)),
    ),
    ...new Map(addWords.map((w) => [wordKey(w), w])).values(),
  ];
  const addedAuthors = new Set(addAuthors.map((a) => a.authorId));
  const authors = [
    ...current.mutedAuthors.filter(
      (a) => live(a.expiresAtMs, nowMs) && !dropAuthors.has(a.authorId) && !addedAuthors.has(a.authorId),
    ),
    ...new Map(addAuthors.map((a) => [a.authorId, a])).values(),
  ];
  if (words.length > MAX_MUTED_WORDS)
    throw bad('muted_words', `would hold ${words.length} entries; at most ${MAX_MUTED_WORDS} are allowed`);
  if (authors.length > MAX_MUTED_AUTHORS)
    throw bad('muted_authors', `would hold ${authors.length} entries; at most ${MAX_MUTED_AUTHORS} are allowed`);
  return {
    mutedWords: words,
    mutedAuthors: authors,
    languages: 'languages' in b ? parseLanguages(b.languages, 'languages') : current.languages,
    languagesInFollowing:
      b.languages_in_following === undefined ? current.languagesInFollowing : b.languages_in_following === true,
    maxPerAuthor: 'max_per_author' in b ? parseMaxPerAuthor(b.max_per_author) : current.maxPerAuthor,
  };
}
