/**
 * The muted-word matcher of a reader's preferences (docs/preferences.md "Muted words"), compiled once per
 * document (compiled-preferences.ts) and run on hydrated items. Pure: no I/O.
 *
 * Matching is case- and accent-insensitive: text and phrases are folded the same way (`normalize('NFKD')`,
 * combining marks removed, lower case), then split into words on every character that is not a letter or
 * a digit (`[^\p{L}\p{N}]`). A phrase of several words matches those words in order and adjacent.
 * - whole word (the default): on word boundaries — "bitcoin" hides "Bitcoin's rally" and "BITCOIN", not
 *   "bitcoiner"; "machine learning" does not hide "learning machines";
 * - `whole_word: false`, and any phrase written in a script without spaces between words (Han, Hiragana,
 *   Katakana, Thai, …, where every character run is one "word"): as a substring of the folded text.
 *
 * **Bounded work per item.** An item is folded once, and at most {@link MAX_FOLDED_CHARS} folded characters
 * of it: its title, then its tags, then its text, folded 256 characters at a time until that
 * many are folded (a word cut at the bound is left out; src/kernel/items/fold.ts). NFKD can expand a
 * character 18 times (U+FDFA is 18 letters), so a text of 100,000 × U+FDFA was 1.8 million characters to
 * fold — ~200 ms of event loop per fold here, redone at every explain; now at most {@link MAX_FOLDED_CHARS}
 * + 18 × 256 characters are produced (1.3 ms for that item), whatever the text. A muted phrase that first
 * appears past the bound in a long text does not hide the item: the first ~2,500 words are read (the
 * title and tags always).
 *
 * How: an item's words are joined by one space with a space at both ends (` w1 w2 … `, cached per item
 * object: the item cache shares one frozen object per item across readers, and the explain API reads that
 * copy too). A whole-word phrase then is
 * the substring ` p1 p2 ` of it, a substring phrase `p1 p2`; every phrase of the matcher is one
 * alternative of ONE regular expression of literals, so an item costs one pass whatever the number of
 * phrases: 0.6 µs for 200 phrases on a 32-word item, against 4.2 µs for a word-by-word hash lookup plus
 * one `includes` per substring phrase (bench/preferences.ts). Literal alternatives have no quantifier to
 * backtrack on. A shared item also remembers the last matcher that checked it and its verdict (one slot,
 * not a map: a WeakMap entry per item and matcher cost more than the match), so the delivery of a page the
 * reader's walk just checked costs a lookup per item.
 */

import { fold, foldBounded } from '../kernel/items/fold.js';

/** Most folded characters read of one item (title, tags, then text): see the module doc. */
export const MAX_FOLDED_CHARS = 20_000;

/** The words of folded text. */
function words(folded: string): string[] {
  return folded.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0);
}

/** Scripts written without spaces between words: their phrases match as substrings. */
const UNSPACED =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/** One phrase to compile. */
export interface PhraseRule {
  phrase: string;
  wholeWord: boolean;
}

/** What an item is matched on. */
export interface MatchableItem {
  title: string;
  text: string;
  tags: readonly string[];
}

/** An item's fold (see {@link foldItem}). */
export interface Folded {
  /** The words joined by one space, with a space at both ends. */
  joined: string;
  /** The id of the last matcher that checked the item (0: none), and what it found. */
  by: number;
  found: string | null;
}

const foldCache = new WeakMap<object, Folded>();

/**
 * The folded words of an item joined by one space, with a space at both ends (at most
 * {@link MAX_FOLDED_CHARS} folded characters read; see the module doc), cached for a shared (frozen) item.
 */
export function foldItem(item: MatchableItem): Folded {
  const hit = foldCache.get(item);
  if (hit) return hit;
  const { folded, cut } = foldBounded([item.title, ...item.tags, item.text], MAX_FOLDED_CHARS);
  const ws = words(folded);
  if (cut) ws.pop(); // the last word may be a part of one
  const f: Folded = { joined: ` ${ws.join(' ')} `, by: 0, found: null };
  if (Object.isFrozen(item)) foldCache.set(item, f); // a shared copy of the item cache: never changes
  return f;
}

/** Matcher ids (the verdict slot of a folded item names its matcher by id: no matcher is kept alive by it). */
let lastMatcherId = 0;

/** The words of a phrase once folded ([] when it holds no letter or digit). */
export function phraseWords(phrase: string): string[] {
  return words(fold(phrase));
}

/** `s` as a literal inside a regular expression. */
const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/**
 * A compiled set of phrases (see the module doc): `match(item)` returns a phrase (as given) the item holds,
 * or null; `matchAll(item)` every one.
 */
export class MutedWordMatcher {
  /** Each phrase's needle in the joined words (` p1 p2 ` whole word, `p1 p2` substring) and the phrase as given. */
  private readonly needles: [string, string][] = [];
  /** Needle → the first phrase compiled with it. */
  private readonly phraseOf = new Map<string, string>();
  private readonly any: RegExp | null;
  private readonly id = ++lastMatcherId;

  constructor(rules: readonly PhraseRule[]) {
    for (const r of rules) {
      const w = phraseWords(r.phrase);
      if (w.length === 0) continue;
      const needle = r.wholeWord && !UNSPACED.test(r.phrase) ? ` ${w.join(' ')} ` : w.join(' ');
      this.needles.push([needle, r.phrase]);
      if (!this.phraseOf.has(needle)) this.phraseOf.set(needle, r.phrase);
    }
    this.any = this.needles.length > 0 ? new RegExp([...this.phraseOf.keys()].map(literal).join('|')) : null;
  }

  /** Whether no phrase was compiled. */
  get empty(): boolean {
    return this.any === null;
  }

  /** A muted phrase `item` holds (the leftmost found, as given), or null. */
  match(item: MatchableItem): string | null {
    if (this.any === null) return null;
    const f = foldItem(item);
    if (f.by === this.id) return f.found; // this matcher checked this shared item last
    // `test` first: it is twice as fast as `exec`, and most items hold no muted phrase
    f.found = this.any.test(f.joined) ? this.phraseOf.get(this.any.exec(f.joined)![0])! : null;
    f.by = this.id;
    return f.found;
  }

  /**
   * Every phrase `item` holds, each once, as given, in the order they were compiled ([] when none): the
   * `filtered` list of a `warn` action. One pass when it holds none; else one `includes` per phrase.
   */
  matchAll(item: MatchableItem): string[] {
    if (this.match(item) === null) return [];
    const joined = foldItem(item).joined;
    const out = new Set<string>();
    for (const [needle, phrase] of this.needles) if (joined.includes(needle)) out.add(phrase);
    return [...out];
  }
}
