/**
 * The muted-word matcher of a reader's preferences (docs/preferences.md "Muted words"), compiled once per
 * snapshot and run on hydrated items. Pure: no I/O.
 *
 * Matching is case- and accent-insensitive: text and phrases are folded the same way (`normalize('NFKD')`,
 * combining marks removed, lower case), then split into words on every character that is not a letter or
 * a digit (`[^\p{L}\p{N}]`). A phrase of several words matches those words in order and adjacent.
 * - whole word (the default): on word boundaries — "bitcoin" hides "Bitcoin's rally" and "BITCOIN", not
 *   "bitcoiner"; "machine learning" does not hide "learning machines";
 * - `whole_word: false`, and any phrase written in a script without spaces between words (Han, Hiragana,
 *   Katakana, Thai, …, where every character run is one "word"): as a substring of the folded text.
 * Cost: one fold of the item's title, text and tags (cached per item object: the item cache shares one
 * frozen object per item across readers) and one pass over its words with a hash lookup per word, whatever
 * the number of phrases; substring phrases cost one `includes` each.
 */

/** The fold shared by text and phrases: NFKD, combining marks removed, lower case. */
export function fold(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

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

interface Folded {
  /** Words, for whole-word phrases. */
  words: string[];
  /** The words joined by one space, with a space at both ends, for substring phrases. */
  joined: string;
}

const foldCache = new WeakMap<object, Folded>();

function foldItem(item: MatchableItem): Folded {
  const hit = foldCache.get(item);
  if (hit) return hit;
  const w = words(fold(`${item.title}\n${item.text}\n${item.tags.join('\n')}`));
  const f = { words: w, joined: ` ${w.join(' ')} ` };
  if (Object.isFrozen(item)) foldCache.set(item, f); // a shared copy of the item cache: never changes
  return f;
}

/** The words of a phrase once folded ([] when it holds no letter or digit). */
export function phraseWords(phrase: string): string[] {
  return words(fold(phrase));
}

/** A compiled set of phrases: `match(item)` returns the first phrase (as given) the item holds, or null. */
export class MutedWordMatcher {
  /** Whole-word phrases by their first word: [all words, the phrase as given]. */
  private readonly byFirst = new Map<string, [string[], string][]>();
  /** Substring phrases: [folded words joined by one space, the phrase as given]. */
  private readonly substrings: [string, string][] = [];

  constructor(rules: readonly PhraseRule[]) {
    for (const r of rules) {
      const w = phraseWords(r.phrase);
      if (w.length === 0) continue;
      if (!r.wholeWord || UNSPACED.test(r.phrase)) this.substrings.push([w.join(' '), r.phrase]);
      else {
        const list = this.byFirst.get(w[0]!);
        if (list) list.push([w, r.phrase]);
        else this.byFirst.set(w[0]!, [[w, r.phrase]]);
      }
    }
  }

  /** Whether no phrase was compiled. */
  get empty(): boolean {
    return this.byFirst.size === 0 && this.substrings.length === 0;
  }

  /** The first muted phrase `item` holds, or null. */
  match(item: MatchableItem): string | null {
    if (this.empty) return null;
    let found: string | null = null;
    this.scan(item, (phrase) => {
      found = phrase;
      return true;
    });
    return found;
  }

  /**
   * Every phrase `item` holds, each once, as given: the whole-word ones in the order they occur in the
   * item, then the substring ones in the order they were compiled ([] when none). The `filtered` list of a
   * `warn` action.
   */
  matchAll(item: MatchableItem): string[] {
    if (this.empty) return [];
    const out = new Set<string>();
    this.scan(item, (phrase) => {
      out.add(phrase);
      return false;
    });
    return [...out];
  }

  /** Calls `hit` with each phrase found (repeats possible) until it returns true. */
  private scan(item: MatchableItem, hit: (phrase: string) => boolean): void {
    const f = foldItem(item);
    if (this.byFirst.size > 0) {
      const ws = f.words;
      for (let i = 0; i < ws.length; i++) {
        const candidates = this.byFirst.get(ws[i]!);
        if (!candidates) continue;
        for (const [pw, phrase] of candidates) if (holdsAt(ws, i, pw) && hit(phrase)) return;
      }
    }
    for (const [s, phrase] of this.substrings) if (f.joined.includes(s) && hit(phrase)) return;
  }
}

/** Whether `ws` holds the words `pw` starting at `i`. */
function holdsAt(ws: readonly string[], i: number, pw: readonly string[]): boolean {
  if (i + pw.length > ws.length) return false;
  for (let j = 1; j < pw.length; j++) if (ws[i + j] !== pw[j]) return false;
  return true;
}
