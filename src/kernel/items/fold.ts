/**
 * Folding item text for matching, with the work bounded by the output, not the input: NFKD can make 18
 * characters of one (U+FDFA; Unicode UAX #15, "Stream-Safe Text Format"), so a text of 100,000 × U+FDFA
 * is 1.8 million characters once normalised. {@link foldBounded} folds slice by slice and stops once a
 * bound of folded characters is reached, so an item costs at most that bound plus one slice's expansion,
 * whatever its length. Used by the muted-word matcher (src/exclusions/muted-words.ts) and the text
 * embedder (src/discover/embedding.ts). Pure: no I/O.
 */

/** The most characters NFKD makes of one: 18 (U+FDFA; UAX #15). */
export const MAX_NFKD_EXPANSION = 18;
/** Characters folded at a time by {@link foldBounded} (its overshoot is at most 18 × this). */
export const FOLD_SLICE = 256;

/** The fold of the muted words: NFKD, every combining mark removed, lower case. */
export function fold(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/**
 * `f` (default {@link fold}) of `parts` joined by newlines, stopping once `max` folded characters are made:
 * the folded text (at most `max` characters) and whether it was cut (then its last word may be a part of
 * one). A text short enough that no expansion can pass `max` is folded in one call; a longer one
 * {@link FOLD_SLICE} characters at a time, never between a surrogate pair. `f` must fold a slice the way it
 * folds the whole text around it (true of NFKD, removing marks and lower-casing, but for Greek final sigma
 * at a slice's end).
 */
export function foldBounded(
  parts: readonly string[],
  max: number,
  f: (s: string) => string = fold,
): { folded: string; cut: boolean } {
  const whole = parts.join('\n');
  if (whole.length * MAX_NFKD_EXPANSION <= max) return { folded: f(whole), cut: false };
  let out = '';
  for (let i = 0; i < whole.length; ) {
    let end = Math.min(whole.length, i + FOLD_SLICE);
    const last = whole.charCodeAt(end - 1);
    if (end < whole.length && last >= 0xd800 && last <= 0xdbff) end++; // keep a surrogate pair whole
    out += f(whole.slice(i, end));
    i = end;
    if (out.length >= max) return { folded: out.slice(0, max), cut: i < whole.length || out.length > max };
  }
  return { folded: out, cut: false };
}
