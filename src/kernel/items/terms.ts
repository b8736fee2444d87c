/**
 * Interest terms: how a reader's free-form interests become the plain words that are stored and
 * searched. Pure (no I/O): the content store normalizes with it on `setInterests`, recall builds its
 * tsquery with it.
 *
 * Because every word is letters and digits, a word can never carry tsquery syntax (`& | ! :* ( ) '`),
 * so joining words with ` | ` is a safe OR query (no injection through interests).
 */

/** At most this many terms are kept per reader (and per recall query). */
export const MAX_TERMS = 100;
/** Words longer than this (characters) are dropped: they are noise, not interests. */
export const MAX_TERM_LENGTH = 64;

/**
 * Normalizes interest terms: each term is NFKD-folded with diacritics removed ("Émigré" →
 * "emigre"), lower-cased and split into its words of letters and digits, in any script ("Go-Lang" →
 * "go", "lang"; "C++" → "c"; "Москва" → "москва"); every other character is dropped, as are words longer than
 * {@link MAX_TERM_LENGTH}. Words are deduplicated (first occurrence wins) and at most
 * {@link MAX_TERMS} are kept. Non-string entries are ignored. Never throws.
 */
export function normalizeTerms(terms: readonly unknown[]): string[] {
  const out = new Set<string>();
  for (const term of terms) {
    if (typeof term !== 'string') continue;
    const folded = term
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase();
    for (const word of folded.match(/[\p{L}\p{N}]+/gu) ?? []) {
      if (word.length > MAX_TERM_LENGTH) continue;
      out.add(word);
      if (out.size >= MAX_TERMS) return [...out];
    }
  }
  return [...out];
}

/**
 * The text of an OR tsquery over normalized terms (`'rust | go'`), for
 * `to_tsquery('english', $n)`; `''` when there are no usable words.
 */
export function orQueryText(terms: readonly unknown[]): string {
  return normalizeTerms(terms).join(' | ');
}
