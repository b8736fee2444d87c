/**
 * The candidate walk of a for-you refresh (docs/for-you.md "Recall"): the reader's interest matches,
 * then the shared fill pool in its order, then every older live item by (`published_at`, id) desc —
 * in rounds of `chunk` candidates, each checked against the seen filter in one round trip — until
 * `want` clean candidates are found (or, after a round, at least half of them) or the catalog is exhausted. So the feed never runs dry while the
 * catalog holds live items the reader has not been served, and fresh items always come first.
 *
 * Deep scroll: where the walk stopped is the reader's cursor (kept by the feed cache). A `load_more`
 * whose buffer ran out resumes there instead of re-checking everything above it; a `refresh` starts at
 * the top (what is new comes first) and jumps to the cursor when `TOP_ROUNDS` rounds found too few.
 *
 * Interests beyond the matches: inside every round of the stream (pool entries, then keyset rows), the
 * candidates holding some of the reader's interest lexemes come first, best first by (lexemes held) ×
 * Gaussian decay, the others keep their order — so past the window, where the decay no longer separates
 * items, an old item is still ranked by relevance × decay within its round. Across rounds the order
 * stays the stream's (fresh first, then by age): a round is the bound on what one seen check reads, so
 * a match a few rounds down does not overtake the non-matching items of the rounds above it.
 *
 * Candidates older than the decay window are also checked against `olderSeen` (the discover design's per-reader
 * filter) when the feed has one: the rolling filters forget an impression after 7 days, and an old
 * item stays recallable for ever, so without it an item served more than 7 days ago could come back.
 */
import type { ReaderExclusions } from '../kernel/exclusion-source.js';
import type { Item } from '../kernel/items/item.js';
import type { SeenFilter } from '../kernel/seen-filter.js';
import type { Pool } from './fill-pool.js';
import type { Candidate, CandidateRecall, KeysetCursor } from './recall.js';
import { gaussDecay, type GaussDecay } from './decay.js';
import { matchedCount, matchScore } from './scoring.js';
import { arrangePages, authorCap } from '../kernel/author-diversity.js';

/** Rounds a refresh walks from the top before it jumps to the reader's cursor. */
export const TOP_ROUNDS = 4;
/** Rounds after which a walk stops as soon as it holds a page. */
export const SOFT_ROUNDS = 8;
/** Rounds a walk never exceeds (a bound on one request's work: HARD_ROUNDS × chunk candidates). */
export const HARD_ROUNDS = 64;

/** Where a reader's last walk stopped: the last pool entry examined, or the keyset position. */
export interface WalkCursor {
  /** Id of the last pool entry examined (mapped into a newer build by id). */
  p?: string;
  /** Keyset position of the last older item examined (the pool was passed). */
  k?: KeysetCursor;
}

/** Parses a stored cursor; anything unreadable is no cursor. */
export function parseCursor(s: string | null): WalkCursor | null {
  if (!s) return null;
  try {
    const c = JSON.parse(s) as WalkCursor;
    if (typeof c.p === 'string') return { p: c.p };
    if (Array.isArray(c.k) && typeof c.k[0] === 'number' && typeof c.k[1] === 'string') return { k: [c.k[0], c.k[1]] };
  } catch {
    // an unreadable cursor is none
  }
  return null;
}

/** What one walk needs. */
export interface WalkInput {
  readerId: string;
  nowMs: number;
  ex: ReaderExclusions;
  /** The reader's interest matches, best first (walked first). */
  matches: readonly Candidate[];
  /** The reader's interest lexemes (`CandidateRecall.interestLexemes`): each round's matches come first. */
  lexemes: readonly string[];
  /** The decay that ranks a round's matches (relevance × decay). */
  decay: GaussDecay;
  pool: Pool;
  /** The reader's stored cursor, or null. */
  cursor: WalkCursor | null;
  /** true: resume at the cursor (a load_more whose buffer ran out); false: start at the top. */
  resume: boolean;
  /** Clean candidates wanted (the recall size N). */
  want: number;
  /** A page: after SOFT_ROUNDS the walk stops once it holds this many. */
  page: number;
  /** Candidates per round. */
  chunk: number;
  /** Items published before `nowMs − horizonMs` are checked against `olderSeen` too. */
  horizonMs: number;
}

/** Ports of the walk. */
export interface WalkDeps {
  recall: Pick<CandidateRecall, 'older'>;
  /** The seen check (the explain API walks with a read-only one: `SeenFilter.probe`). */
  seen: Pick<SeenFilter, 'seen'>;
  olderSeen?: Pick<SeenFilter, 'seen'>;
  /**
   * Hydrates ids (live items, in order): the walk reads the unseen candidates of a round when the
   * reader's preferences need the item (muted words, languages, muted authors, "show less" tags).
   */
  hydrate?: (ids: readonly string[]) => Promise<Item[]>;
}

/**
 * The walk's result: clean candidates in order, candidates examined and dropped (seen; `hidden` by a
 * preference), the cursor to store (null: keep), and whether the stream ran out (nothing below).
 */
export interface WalkResult {
  clean: Candidate[];
  examined: number;
  dropped: number;
  hidden: number;
  cursor: WalkCursor | null;
  exhausted: boolean;
}

/**
 * The input of a refresh's walk: the recall size N clean candidates wanted, in rounds of N, under the
 * recall's decay and window (what a refresh and the explain API both walk).
 */
export function refreshWalkInput(
  recall: { limit: number; decay: GaussDecay; horizonMs: number },
  w: Omit<WalkInput, 'want' | 'chunk' | 'decay' | 'horizonMs'>,
): WalkInput {
  return { ...w, decay: recall.decay, want: recall.limit, chunk: recall.limit, horizonMs: recall.horizonMs };
}

/**
 * The walk's clean candidates in serving order: pages of `limit` with at most the reader's author cap of
 * one author each while the candidates hold other authors (home-mixer's discount inside a page), then the
 * rest in pages that exceed the cap (the discount still spreads them). Nothing is left out: a catalog
 * written by one author, or by fewer than a page needs, scrolls to its end; the next walk (a `load_more`
 * past the cache) brings the items below, where the cap holds again while other authors remain.
 */
export function servingOrder(clean: readonly Candidate[], limit: number, maxPerAuthor: number) {
  return arrangePages(clean, limit, authorCap(maxPerAuthor, limit), false).ordered;
}

/** Runs one walk (see the module doc). */
export async function walk(deps: WalkDeps, w: WalkInput): Promise<WalkResult> {
  const { pool, nowMs, ex } = w;
  const taken = new Set<string>();
  const clean: Candidate[] = [];
  let examined = 0;
  let dropped = 0;
  let hidden = 0;
  const needsItems = deps.hydrate !== undefined && ex.needsItems('for-you');
  const accept = (c: Candidate) =>
    c.publishedAt <= nowMs &&
    c.authorId !== w.readerId &&
    !taken.has(c.id) &&
    !pool.removed.has(c.id) &&
    !ex.excludes(c.id, c.authorId);
  const check = async (batch: readonly Candidate[]) => {
    const fresh: Candidate[] = [];
    for (const c of batch) {
      if (!accept(c)) continue;
      taken.add(c.id); // also de-duplicates inside the batch (a match that is a pool entry too)
      fresh.push(c);
    }
    examined += fresh.length;
    const seen = await seenFlags(deps, w, fresh);
    let kept = fresh.filter((_, i) => !seen[i]);
    dropped += fresh.length - kept.length;
    let weight = (c: Candidate) => ex.authorWeight(c.authorId);
    if (needsItems && kept.length > 0) {
      const visible = await itemVisible(deps, ex, kept);
      hidden += kept.length - visible.kept.length;
      ({ kept, weight } = visible);
    }
    // a "not interested" or "show less" author (or tag) weighs less: its items move down inside the round (stable)
    clean.push(...(ex.authorWeights.size > 0 || needsItems ? stableByWeight(kept, weight) : kept));
  };
  const s = new Stream(deps, pool, nowMs, w.lexemes);
  const lexemes = new Set(w.lexemes);
  const stored = w.cursor;
  if (w.resume && stored) s.jump(stored);
  let rounds = 0;
  while (clean.length < w.want && !s.done && rounds < HARD_ROUNDS) {
    // half of N is a long session's worth: a second seen round just to top up the cache is not worth it
    if (rounds >= 1 && clean.length >= w.want / 2) break;
    if (rounds >= SOFT_ROUNDS && clean.length >= w.page) break;
    if (!w.resume && rounds === TOP_ROUNDS && clean.length < w.page && stored && s.before(stored)) s.jump(stored);
    // the interest matches ride with the first round: one seen check for both
    const next = interestsFirst(await s.next(w.chunk), lexemes, w);
    await check(rounds === 0 ? [...w.matches, ...next] : next);
    rounds++;
  }
  const here = s.position();
  // a walk from the top that stopped above the stored cursor keeps the deeper one
  const cursor = here && (!stored || !s.behind(here, stored)) ? here : null;
  return { clean, examined, dropped, hidden, cursor, exhausted: s.done };
}

/**
 * The candidates the preferences that read the item (muted words, languages) leave visible, and their
 * weight by item (author and tags). A hidden candidate is not marked seen and leaves no trace, so it
 * comes back when the mute ends.
 */
async function itemVisible(deps: WalkDeps, ex: ReaderExclusions, kept: readonly Candidate[]) {
  const items = new Map((await deps.hydrate!(kept.map((c) => c.id))).map((i) => [i.id, i]));
  const visible = kept.filter((c) => {
    const item = items.get(c.id);
    return item !== undefined && ex.itemReason(item, 'for-you') === null;
  });
  return { kept: visible, weight: (c: Candidate) => ex.itemWeight(items.get(c.id)!) };
}

/** Seen flags for `batch`: the seen filter, and for items older than the window `olderSeen` too. */
async function seenFlags(deps: WalkDeps, w: WalkInput, batch: readonly Candidate[]): Promise<boolean[]> {
  if (batch.length === 0) return [];
  const ids = batch.map((c) => c.id);
  const edge = w.nowMs - w.horizonMs;
  const old = deps.olderSeen ? batch.filter((c) => c.publishedAt < edge).map((c) => c.id) : [];
  const [flags, oldFlags] = await Promise.all([
    deps.seen.seen(w.readerId, ids, w.nowMs),
    old.length > 0 ? deps.olderSeen!.seen(w.readerId, old, w.nowMs) : Promise.resolve([] as boolean[]),
  ]);
  if (old.length === 0) return flags;
  const oldSeen = new Set(old.filter((_, i) => oldFlags[i]));
  return flags.map((f, i) => f || oldSeen.has(ids[i]!));
}

/**
 * Interest matching in process (the default): the pool entries inside [now − horizon, now] holding at
 * least one of `lexemes`, best first by (lexemes matched) × Gaussian decay × the author's weight (ties:
 * pool order), at most `limit`, whatever the catalog. A simpler relevance than
 * `ts_rank` (no A/B weights, no length normalisation), over the pool's items only; items outside the
 * pool still come through the walk. An inverted index of the pool (lexeme → entry positions, built once
 * per pool object) makes the cost the reader's matches, not the pool's size.
 */
export function matchPool(
  pool: Pool,
  lexemes: readonly string[],
  q: { nowMs: number; decay: GaussDecay; horizonMs: number; limit: number; weight: (authorId: string) => number },
): Candidate[] {
  if (lexemes.length === 0) return [];
  const edge = q.nowMs - q.horizonMs;
  const postings = postingsOf(pool);
  const hits = new Map<number, number>();
  for (const l of new Set(lexemes)) for (const i of postings.get(l) ?? []) hits.set(i, (hits.get(i) ?? 0) + 1);
  const scored: { c: Candidate; s: number; i: number }[] = [];
  for (const [i, n] of hits) {
    const c = pool.entries[i]!;
    if (c.publishedAt < edge || c.publishedAt > q.nowMs) continue;
    scored.push({ c, s: matchScore(n, gaussDecay(q.decay, q.nowMs, c.publishedAt), q.weight(c.authorId)), i });
  }
  scored.sort((a, b) => b.s - a.s || a.i - b.i);
  return scored.slice(0, q.limit).map((x) => x.c);
}

const postingCache = new WeakMap<Pool, Map<string, number[]>>();

/** Lexeme → positions of the pool entries holding it, computed once per pool object. */
function postingsOf(pool: Pool): Map<string, number[]> {
  let postings = postingCache.get(pool);
  if (postings) return postings;
  postings = new Map();
  pool.entries.forEach((c, i) => {
    for (const l of c.lexemes ?? []) {
      const list = postings!.get(l);
      if (list) list.push(i);
      else postings!.set(l, [i]);
    }
  });
  postingCache.set(pool, postings);
  return postings;
}

/**
 * One round with the candidates holding some of `lexemes` first, by (lexemes held) × Gaussian decay at
 * `nowMs` (stable: ties keep the round's order), the others after them in order. Keyset rows carry their
 * count (`matched`); pool entries their lexemes.
 */
export function interestsFirst(
  round: readonly Candidate[],
  lexemes: ReadonlySet<string>,
  q: { nowMs: number; decay: GaussDecay },
): readonly Candidate[] {
  if (lexemes.size === 0 || round.length === 0) return round;
  const hits: { c: Candidate; s: number; i: number }[] = [];
  const rest: Candidate[] = [];
  round.forEach((c, i) => {
    const n = matchedCount(c, lexemes);
    if (n > 0) hits.push({ c, s: matchScore(n, gaussDecay(q.decay, q.nowMs, c.publishedAt)), i });
    else rest.push(c);
  });
  if (hits.length === 0) return round;
  hits.sort((a, b) => b.s - a.s || a.i - b.i);
  return [...hits.map((h) => h.c), ...rest];
}

/** `list` by weight desc, stable; as it is when every weight is 1 (no sort: the common case of a reader with preferences). */
function stableByWeight(list: readonly Candidate[], weight: (c: Candidate) => number): readonly Candidate[] {
  const weighted = list.map((c, i) => ({ c, i, w: weight(c) }));
  if (weighted.every((x) => x.w === 1)) return list;
  return weighted.sort((a, b) => b.w - a.w || a.i - b.i).map((x) => x.c);
}

/** The fill stream: pool entries in order, then the keyset walk over older items. */
class Stream {
  done = false;
  private pos = 0;
  private lastPool: string | undefined;
  private keyset: KeysetCursor | null;
  private inKeyset = false;

  constructor(
    private readonly deps: WalkDeps,
    private readonly pool: Pool,
    private readonly nowMs: number,
    private readonly lexemes: readonly string[],
  ) {
    // the pool holds the whole window (and the newest older items): the keyset starts below them
    this.keyset = pool.windowComplete ? pool.next : null;
    if (pool.entries.length === 0) this.inKeyset = true;
  }

  /** The next round's candidates (possibly empty while not done). */
  async next(chunk: number): Promise<Candidate[]> {
    if (!this.inKeyset) {
      const batch = this.pool.entries.slice(this.pos, this.pos + chunk);
      this.pos += batch.length;
      this.lastPool = batch.at(-1)?.id ?? this.lastPool;
      if (this.pos >= this.pool.entries.length) this.inKeyset = true;
      return batch;
    }
    const rows = await this.deps.recall.older(this.nowMs, this.keyset, chunk, this.lexemes);
    if (rows.length < chunk) this.done = true;
    const last = rows.at(-1);
    if (last) this.keyset = [last.publishedAt, last.id];
    // without the whole window in the pool the keyset starts at now: skip what the pool already gave
    return this.pool.windowComplete && this.pool.next ? rows : rows.filter((r) => !this.pool.index.has(r.id));
  }

  /** Moves to a stored cursor (a pool id unknown to this build restarts the pool). */
  jump(c: WalkCursor): void {
    if (c.k) {
      this.inKeyset = true;
      this.keyset = c.k;
      return;
    }
    const i = c.p === undefined ? undefined : this.pool.index.get(c.p);
    if (i !== undefined && i + 1 > this.pos) {
      this.pos = i + 1;
      this.lastPool = c.p;
      if (this.pos >= this.pool.entries.length) this.inKeyset = true;
    }
  }

  /** Where the stream stands (null before anything was read). */
  position(): WalkCursor | null {
    if (this.inKeyset && this.keyset) return { k: this.keyset };
    return this.lastPool !== undefined ? { p: this.lastPool } : null;
  }

  /** Whether the stream is above `c` (jumping there would skip ahead). */
  before(c: WalkCursor): boolean {
    const here = this.position();
    return here === null || this.behind(here, c);
  }

  /** Whether position `a` is above (shallower than) `b`. */
  behind(a: WalkCursor, b: WalkCursor): boolean {
    if (b.k) {
      if (!a.k) return true;
      return a.k[0] > b.k[0] || (a.k[0] === b.k[0] && a.k[1] > b.k[1]);
    }
    if (a.k) return false;
    const ia = this.pool.index.get(a.p!) ?? -1;
    const ib = this.pool.index.get(b.p!) ?? -1;
    return ia < ib;
  }
}
