/**
 * A reader's preferences compiled for the snapshot (domain.ts): the live muted authors as a set, one
 * muted-word matcher per feed for each action (`hide`, `warn`), the language set. Pure: no I/O.
 *
 * Compiling a full document (200 phrases folded and indexed, 1,000 authors) costs ~0.15 ms, which a
 * load_more of 0.6 ms cannot pay on every request (bench/preferences.ts). So the result is memoized per
 * document object — the cache adapters hand the same object to every request until the document changes
 * (the in-process cache keeps it; the Redis one keeps the parsed document of each fill,
 * adapters/redis-exclusion-cache.ts) — together with the stretch of time it is valid for: from the last expiry passed to the next
 * one to come, so an expiring mute recompiles it once, and a request at any other time (virtual time may
 * go back) recompiles rather than reuse it.
 */
import { PREFERENCE_FEEDS, type PreferenceFeed } from '../kernel/exclusion-source.js';
import { MutedWordMatcher } from './muted-words.js';
import { live, type MutedWord, type Preferences } from './preferences.js';

/** The compiled form of a reader's preferences at a time (see the module doc). */
export interface CompiledPreferences {
  /** Authors muted and not expired. */
  mutedAuthors: ReadonlySet<string>;
  /** Matchers of the live `hide` phrases, per feed that has any. */
  hide: ReadonlyMap<PreferenceFeed, MutedWordMatcher>;
  /** Matchers of the live `warn` phrases, per feed that has any. */
  warn: ReadonlyMap<PreferenceFeed, MutedWordMatcher>;
  /** The languages the ranked feeds keep, or null for all. */
  languages: ReadonlySet<string> | null;
  /** Valid for requests at `fromMs` ≤ now < `untilMs` (epoch ms): no mute starts or ends in between. */
  fromMs: number;
  untilMs: number;
}

const memo = new WeakMap<Preferences, CompiledPreferences>();

/**
 * The preferences `prefs` compiled for a request at `nowMs`: memoized per document object while `nowMs`
 * stays within the stretch it was compiled for (see the module doc). The document must not be changed
 * after its first use here (stored and cached documents never are: a write replaces them).
 */
export function compilePreferences(prefs: Preferences, nowMs: number): CompiledPreferences {
  const hit = memo.get(prefs);
  if (hit && nowMs >= hit.fromMs && nowMs < hit.untilMs) return hit;
  const compiled = compile(prefs, nowMs);
  memo.set(prefs, compiled);
  return compiled;
}

function compile(prefs: Preferences, nowMs: number): CompiledPreferences {
  let fromMs = Number.NEGATIVE_INFINITY;
  let untilMs = Number.POSITIVE_INFINITY;
  for (const e of [...prefs.mutedWords, ...prefs.mutedAuthors]) {
    if (e.expiresAtMs === null) continue;
    if (e.expiresAtMs > nowMs) untilMs = Math.min(untilMs, e.expiresAtMs);
    else fromMs = Math.max(fromMs, e.expiresAtMs);
  }
  const words = prefs.mutedWords.filter((w) => live(w.expiresAtMs, nowMs));
  return {
    mutedAuthors: new Set(prefs.mutedAuthors.filter((a) => live(a.expiresAtMs, nowMs)).map((a) => a.authorId)),
    hide: matchers(words.filter((w) => w.action !== 'warn')),
    warn: matchers(words.filter((w) => w.action === 'warn')),
    languages: prefs.languages ? new Set(prefs.languages) : null,
    fromMs,
    untilMs,
  };
}

/** One matcher per feed that `words` apply to (feeds without any are absent); one shared when all apply everywhere. */
function matchers(words: readonly MutedWord[]): Map<PreferenceFeed, MutedWordMatcher> {
  const out = new Map<PreferenceFeed, MutedWordMatcher>();
  if (words.length === 0) return out;
  const shared = words.every((w) => w.feeds === null) ? new MutedWordMatcher(words) : null;
  for (const feed of PREFERENCE_FEEDS) {
    const matcher = shared ?? new MutedWordMatcher(words.filter((w) => w.feeds === null || w.feeds.includes(feed)));
    if (!matcher.empty) out.set(feed, matcher);
  }
  return out;
}
